package isa

import (
	"encoding/hex"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// decodeAll decodes a sequence of instructions laid out from 0x100; the
// instruction after the one at index taken (if >= 0) is at 0x800, as if
// the path followed that branch.
func decodeAll(t *testing.T, code []byte, taken int) ([]x86asm.Inst, []Inst) {
	t.Helper()
	var xs []x86asm.Inst
	var path []Inst
	addr := uint64(0x100)
	for len(code) > 0 {
		x, err := x86asm.Decode(code, 64)
		if err != nil {
			t.Fatalf("decode %x: %v", code, err)
		}
		xs = append(xs, x)
		path = append(path, Inst{Addr: addr, Len: x.Len})
		addr += uint64(x.Len)
		if len(xs)-1 == taken {
			addr = 0x800
		}
		code = code[x.Len:]
	}
	return xs, path
}

// TestTableBound covers the compare-and-branch idioms that bound a jump
// table's index. Bytes assembled by GNU as from the text beside them.
func TestTableBound(t *testing.T) {
	tests := []struct {
		asm, hex string
		taken    int // index of the branch the path takes, or -1
		want     int
	}{
		{"cmp $0x1f,%ecx; ja; lea; movslq (%rdx,%rcx,4),%rax",
			"83f91f0f8700000000488d15000100004863048a", -1, 32},
		{"cmp $0x4d,%ecx; jg; ja; lea; movslq (%rdx,%rcx,4),%rax",
			"83f94d0f8f000000000f8700000000488d15000100004863048a", -1, 78},
		{"mov %edx,%ecx; sar $3,%ecx; cmp $0x47,%edx; ja; lea; movslq (%rsi,%rcx,4),%rdx",
			"89d1c1f90383fa470f8700000000488d35000100004863148e", -1, 9},
		{"cmpl $5,0x78(%rbx); mov -0x40(%rbp),%r8; mov 0x8(%rdx),%rsi; ja; mov 0x78(%rbx),%eax; lea; movslq (%rdx,%rax,4),%rax",
			"837b78054c8b45c0488b72080f87000000008b4378488d150001000048630482", -1, 6},
		{"cmp $7,%edi; jae; jmp *0x2000(,%rdi,8)",
			"83ff070f8300000000ff24fd00200000", -1, 7},
		{"cmp $0xe,%edx; jbe (taken); lea; movslq (%rcx,%rdx,4),%rdx",
			"83fa0e0f8600000000488d0d0001000048631491", 1, 15},
		{"cmp $0xe,%edx; jb (taken); lea; movslq (%rcx,%rdx,4),%rdx",
			"83fa0e0f8200000000488d0d0001000048631491", 1, 14},
		// Falling through a jbe (python's `cmp $0x37,%rax; jbe`) bounds nothing.
		{"cmp $0x37,%rax; jbe (not taken); lea; movslq (%rcx,%rdx,4),%rdx",
			"4883f8370f8600000000488d0d0001000048631491", -1, 0},
		// A taken ja leaves the range.
		{"cmp $0xe,%edx; ja (taken); lea; movslq (%rcx,%rdx,4),%rdx",
			"83fa0e0f8700000000488d0d0001000048631491", 1, 0},
		{"cmpb $0x10,0x19(%rbx); mov; rep stos; movups; mov; ja; movzbl 0x19(%rbx),%eax; lea; movslq (%rcx,%rax,4),%rax",
			"807b19104c89e7f348ab0f11442428418b41040f87ac0000000fb64319488d0d197c08004863048" + "1", -1, 17},
		{"movzwl %bp,%eax; cmp $0x14c,%eax; ja; mov; movzwl %bp,%eax; lea; movslq (%rcx,%rax,4),%rax",
			"0fb7c53d4c0100000f87000000004889d30fb7c5488d0d0001000048630481", -1, 333},
		// The index comes from another register than the compared value.
		{"movzwl %bp,%eax; cmp $0x14c,%eax; ja; movswl %dx,%eax; lea; movslq (%rcx,%rax,4),%rax",
			"0fb7c53d4c0100000f87000000000fbfc2488d0d0001000048630481", -1, 0},
		// The index is replaced after the compare: unknown.
		{"cmp $5,%ecx; mov %edx,%ecx; ja; lea; movslq (%rdx,%rcx,4),%rax",
			"83f90589d10f8700000000488d15000100004863048a", -1, 0},
		// The compared register changed after it was copied to the index.
		{"mov %edx,%ecx; add $1,%edx; cmp $5,%edx; ja; lea; movslq (%rdx,%rcx,4),%rax",
			"89d183c20183fa050f8700000000488d15000100004863048a", -1, 0},
		// The nearest bound compares another value; one further up bounds
		// the index (libgraphblas's zstd, HUF_decompress4X1's tables).
		{"cmp $7,%rsi; jbe (taken); movzbl (%rdi),%edx; cmp $7,%r9w; ja; lea; movslq (%r8,%rsi,4),%rdi",
			"4883fe070f86fa0000000fb617664183f9070f87fa0000004c8d050001000049633cb0", 1, 8},
		// ... unless the index is replaced after it.
		{"cmp $7,%rsi; jbe (taken); mov %rdx,%rsi; cmp $7,%r9w; ja; lea; movslq (%r8,%rsi,4),%rdi",
			"4883fe070f86fa0000004889d6664183f9070f87fa0000004c8d050001000049633cb0", 1, 0},
		// A call between the bound and the load may change the index.
		{"cmp $5,%ecx; ja; call; lea; movslq (%rdx,%rcx,4),%rax",
			"83f9050f8700000000e800000000488d15000100004863048a", -1, 0},
	}
	for _, tc := range tests {
		code, err := hex.DecodeString(tc.hex)
		if err != nil {
			t.Fatal(err)
		}
		xs, path := decodeAll(t, code, tc.taken)
		load := len(xs) - 1
		var idx x86asm.Reg
		if m, ok := xs[load].Args[0].(x86asm.Mem); ok {
			idx = m.Index // jmp *table(,%idx,8)
		} else {
			idx = xs[load].Args[1].(x86asm.Mem).Index
		}
		if got := tableBound(xs, path, load, idx); got != tc.want {
			t.Errorf("%s: bound %d, want %d", tc.asm, got, tc.want)
		}
	}
}

// TestSystemInstructions: instructions x86asm does not know, which kernels
// and libraries use (vmlinux's xen_hypercall_amd is vmmcall; jmp).

// TestDyninstSlotConstant: Dyninst 12.3 takes a table index copied from a
// stack slot that the path last stored an immediate to for that constant,
// calls between notwithstanding (glibc's parse_bracket_exp), and so reads
// the table's first entry only. Bytes assembled by GNU as.
func TestDyninstSlotConstant(t *testing.T) {
	tests := []struct {
		asm, hex string
		want     bool
	}{
		{"movl $0x3,0xd0(%rsp); mov 0x60(%rsp),%rdi; call; mov 0xd0(%rsp),%r13d; lea; mov %r13d,%r10d; movslq (%rcx,%r10,4),%rax",
			"c78424d000000003000000488b7c2460e800000000448bac24d0000000488d0d000100004589ea4a630491", true},
		{"movl $0x3,-0x14(%rbp); mov -0x14(%rbp),%eax; jmp *0x2000(,%rax,8)",
			"c745ec030000008b45ecff24c500200000", true},
		// A register stored: Dyninst slices on, no constant.
		{"mov %eax,0xd0(%rsp); call; mov 0xd0(%rsp),%r13d; lea; mov %r13d,%r10d; movslq (%rcx,%r10,4),%rax",
			"898424d0000000e800000000448bac24d0000000488d0d000100004589ea4a630491", false},
		// The stack pointer moves between the store and the load.
		{"movl $0x3,0xd0(%rsp); sub $8,%rsp; mov 0xd0(%rsp),%r13d; lea; movslq (%rcx,%r13,4),%rax",
			"c78424d0000000030000004883ec08448bac24d0000000488d0d000100004a6304a9", false},
		// The index is computed from the slot, not copied.
		{"movl $0x3,0xd0(%rsp); mov 0xd0(%rsp),%r13d; add $1,%r13d; lea; movslq (%rcx,%r13,4),%rax",
			"c78424d000000003000000448bac24d00000004183c501488d0d000100004a6304a9", false},
		// Not a stack slot.
		{"movl $0x3,0xd0(%rbx); mov 0xd0(%rbx),%r13d; lea; movslq (%rcx,%r13,4),%rax",
			"c783d000000003000000448babd0000000488d0d000100004a6304a9", false},
		// Another slot.
		{"movl $0x3,0xd8(%rsp); mov 0xd0(%rsp),%r13d; lea; movslq (%rcx,%r13,4),%rax",
			"c78424d800000003000000448bac24d0000000488d0d000100004a6304a9", false},
	}
	for _, tc := range tests {
		code, err := hex.DecodeString(tc.hex)
		if err != nil {
			t.Fatal(err)
		}
		xs, path := decodeAll(t, code, -1)
		load := len(xs) - 1
		var idx x86asm.Reg
		if m, ok := xs[load].Args[0].(x86asm.Mem); ok {
			idx = m.Index
		} else {
			idx = xs[load].Args[1].(x86asm.Mem).Index
		}
		if got := dyninstSlotConstant(xs, load, idx); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.asm, got, tc.want)
		}
		want := 0
		if tc.want {
			want = 1
		}
		if got := amd64IndexBound(xs, path, load, idx, Targets{Dyninst: true}); got != want {
			t.Errorf("%s: Dyninst's bound %d, want %d", tc.asm, got, want)
		}
		if got := amd64IndexBound(xs, path, load, idx, Targets{}); got != 0 {
			t.Errorf("%s: bloop's bound %d, want 0", tc.asm, got)
		}
	}
}
