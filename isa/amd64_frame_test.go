package isa

import "testing"

func TestFrameAMD64(t *testing.T) {
	cases := []struct {
		name string
		b    []byte
		want FrameOp
	}{
		{"endbr64", []byte{0xf3, 0x0f, 0x1e, 0xfa}, FrameOp{Len: 4, Endbr: true}},
		{"push rbp", []byte{0x55}, FrameOp{Frame: PushBP, Len: 1}},
		{"push rbx", []byte{0x53}, FrameOp{Frame: SPAdd, Len: 1, Imm: -8, PushCS: true}},
		{"pop rbx", []byte{0x5b}, FrameOp{Frame: SPAdd, Len: 1, Imm: 8}},
		{"sub rsp,0x40", []byte{0x48, 0x83, 0xec, 0x40}, FrameOp{Frame: SPAdd, Len: 4, Imm: -0x40, SubSP: true}},
		{"add rsp,0x40", []byte{0x48, 0x83, 0xc4, 0x40}, FrameOp{Frame: SPAdd, Len: 4, Imm: 0x40, AddSP: true}},
		{"mov rbp,rsp", []byte{0x48, 0x89, 0xe5}, FrameOp{Frame: BPFromSP, Len: 3}},
		{"call", []byte{0xe8, 0x0b, 0, 0, 0}, FrameOp{Flow: Call, Len: 5, Target: 0x1010}},
		{"jmp", []byte{0xe9, 0xfb, 0xff, 0xff, 0xff}, FrameOp{Flow: Jump, Len: 5, Target: 0x1000}},
		{"jne", []byte{0x75, 0x02}, FrameOp{Flow: CondJump, Len: 2, Target: 0x1004}},
		{"jmp rax", []byte{0xff, 0xe0}, FrameOp{Flow: IndirectJump, Len: 2}},
		{"ret", []byte{0xc3}, FrameOp{Flow: Return, Len: 1}},
		{"int3", []byte{0xcc}, FrameOp{Flow: Halt, Len: 1, Pad: true}},
		{"nopl", []byte{0x0f, 0x1f, 0x40, 0x00}, FrameOp{Len: 4, Pad: true}},
		{"cmp esi,7", []byte{0x83, 0xfe, 0x07}, FrameOp{Len: 3, CmpImm: 7}},
		{"lea rdx,[rip+0x100]", []byte{0x48, 0x8d, 0x15, 0x00, 0x01, 0, 0}, FrameOp{Len: 7, PCRel: 0x1107}},
		{"mov rbx,rax (a landing pad's first)", []byte{0x48, 0x89, 0xc3}, FrameOp{Len: 3, Inherits: true}},
		{"lea rdi,[rbp-0x30] (a cleanup's first)", []byte{0x48, 0x8d, 0x7d, 0xd0}, FrameOp{Len: 4, Inherits: true}},
		{"mov rax,rdi (an entry's)", []byte{0x48, 0x89, 0xf8}, FrameOp{Len: 3}},
		{"undecodable", []byte{0x06}, FrameOp{Flow: Invalid, Len: 1}},
	}
	for _, c := range cases {
		if got := (amd64{}).Frame(c.b, 0x1000); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}
