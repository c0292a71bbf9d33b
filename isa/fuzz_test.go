package isa

import (
	"debug/elf"
	"path/filepath"
	"testing"
)

// fuzzBase is where fuzz inputs are loaded: high enough that backward
// reads (CallBefore) and pc-relative targets below it stay in range.
const fuzzBase = 0x400000

// textSeeds returns up to n windows of size bytes from the .text of the
// committed binaries matching glob: real code is the best seed for a
// decoder (prologues, jump-table dispatch, PLT stubs).
func textSeeds(f *testing.F, glob string, n, size int) {
	paths, _ := filepath.Glob(glob)
	added := 0
	for _, p := range paths {
		ef, err := elf.Open(p)
		if err != nil {
			continue
		}
		for _, name := range []string{".text", ".plt"} {
			s := ef.Section(name)
			if s == nil {
				continue
			}
			b, err := s.Data()
			if err != nil || len(b) == 0 {
				continue
			}
			for off := 0; off < len(b) && added < n; off += 4 * size {
				f.Add(b[off:min(off+size, len(b))])
				added++
			}
		}
		ef.Close()
		if added >= n {
			return
		}
	}
}

// fuzzArch checks what every user of an instruction set relies on, for
// any bytes: Decode makes progress and reads only the bytes it claims,
// Frame agrees with Decode, and the jump-table, PLT and call-site readers
// return only what they may (no panic, no hang).
func fuzzArch(f *testing.F, a Arch) {
	f.Fuzz(func(t *testing.T, code []byte) {
		mem := &memImage{code: code, codeAddr: fuzzBase, data: code, dataAddr: fuzzBase + 0x100000}
		end := uint64(fuzzBase + len(code))
		to := Targets{
			Valid: func(x uint64) bool { return x >= fuzzBase && x < end },
			Start: func(x uint64) bool { return x >= fuzzBase && x < end && (x-fuzzBase)%uint64(a.Align()) == 0 },
		}
		dy := to
		dy.Dyninst = true
		dy.Code = func(x uint64) bool { return x >= fuzzBase-0x1000 && x < fuzzBase } // another procedure
		if sf, ok := a.(StubFinder); ok {
			for _, st := range sf.CodeStubs(mem, code, fuzzBase, func(uint64) bool { return true }) {
				if st.Addr < fuzzBase || st.End > end || st.End <= st.Addr {
					t.Fatalf("stub %+v outside the code", st)
				}
			}
		}
		var path []Inst
		var sweep []SweepInst
		for off := 0; off < len(code); {
			addr := uint64(fuzzBase + off)
			b := code[off:]
			in := a.Decode(b, addr)
			if in.Len <= 0 || in.Len > a.MaxLen() || in.Addr != addr {
				t.Fatalf("%#x: Decode(% x) = %+v: no progress, or past MaxLen %d", addr, b[:min(len(b), a.MaxLen())], in, a.MaxLen())
			}
			if in.Kind != Invalid {
				if in.Len > len(b) {
					t.Fatalf("%#x: Decode(% x) = %+v claims more bytes than it had", addr, b, in)
				}
				if again := a.Decode(b[:in.Len], addr); again != in {
					t.Fatalf("%#x: Decode(% x) = %+v, but on its own %d bytes %+v", addr, b[:in.Len], in, in.Len, again)
				}
			}
			if fr, ok := a.(Framer); ok {
				op := fr.Frame(b, addr)
				if int(op.Len) != in.Len || op.Flow != in.Kind || (in.Kind != Invalid && op.Target != in.Target) {
					t.Fatalf("%#x: Frame(% x) = len %d %v %#x, Decode = %+v", addr, b[:min(len(b), in.Len)], op.Len, op.Flow, op.Target, in)
				}
				sweep = append(sweep, SweepInst{Addr: addr, Op: op})
				if op.Flow == IndirectJump {
					for _, x := range SweepTable(a, mem, sweep, len(sweep)-1, fuzzBase, end) {
						if !to.Valid(x) {
							t.Fatalf("%#x: sweep table entry %#x is not a valid target", addr, x)
						}
					}
				}
			}
			if ge, ok := a.(GlobalEntries); ok {
				if e := ge.GlobalEntry(mem, addr); e != addr && e != addr-8 {
					t.Fatalf("%#x: global entry %#x", addr, e)
				}
			}
			if ls, ok := a.(LinkerStubs); ok {
				ls.LinkerStub(mem, addr)
			}
			if g, ok := a.(GlinkResolvers); ok {
				g.GlinkResolver(mem, addr)
			}
			a.PLTSlot(b, addr)
			if in.Kind == Call || in.Kind == IndirectCall {
				CallBefore(a, mem, in.End())
			}
			path = append(path, in)
			if len(path) > 64 {
				path = path[1:]
			}
			if in.Kind == IndirectJump {
				for _, x := range a.JumpTable(mem, path[:len(path)-1], in, to) {
					if !to.Valid(x) {
						t.Fatalf("%#x: jump table entry %#x is not a valid target", addr, x)
					}
				}
				// Dyninst's view also takes entries into other code.
				for _, x := range a.JumpTable(mem, path[:len(path)-1], in, dy) {
					if !dy.Valid(x) && !dy.Code(x) {
						t.Fatalf("%#x: jump table entry %#x (Dyninst) is neither valid nor code", addr, x)
					}
				}
				path = path[:0]
			}
			off += in.Len
		}
	})
}
