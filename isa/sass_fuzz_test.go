package isa

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sassGens are the generations FuzzSASS picks from by its input's first
// byte: one of each encoding.
var sassGens = []int{62, 75, 90}

// FuzzSASS: the SASS decoder of each encoding, bound to the code it
// decodes, on any bytes: Decode makes progress in whole instructions and
// reads only them, reconvergence jumps go forward (but a CONT back to the
// loop head a PCNT before it set at or before itself: pascalReconvergence),
// and indirect branches and call sites give only what they may.
func FuzzSASS(f *testing.F) {
	cubinSeeds(f, "../../shared/hpctoolkit-tests/bin/*-sm_*", 12, 512)
	cubinSeeds(f, "../../shared/hpctoolkit-cuda/bin/*-sm_*", 12, 512)
	f.Add([]byte{0, 0x0f, 0, 0, 0, 0, 0, 0xf8, 0xf0}) // sm_62: a SYNC after the control word
	f.Add([]byte{2, 0x47, 0x79, 0xfc})                // sm_90: a BRA cut short
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		sm := sassGens[int(data[0])%len(sassGens)]
		code := data[1:]
		mem := &memImage{code: code, codeAddr: fuzzBase}
		end := uint64(fuzzBase + len(code))
		tables := map[uint64][]uint64{}
		for off := 0; off+8 <= len(code); off += 16 {
			// Any instruction may be listed, with targets anywhere.
			tables[fuzzBase+uint64(off)] = []uint64{binary.LittleEndian.Uint64(code[off:])}
		}
		a := BindCUDA(sm, CUDACode{Mem: mem, Procs: [][2]uint64{{fuzzBase, end}}, Tables: tables,
			Calls: map[uint64]uint64{fuzzBase: fuzzBase + 0x40}})
		to := Targets{Valid: func(x uint64) bool { return x >= fuzzBase && x < end }}
		for off := 0; off < len(code); {
			addr := uint64(fuzzBase + off)
			b := code[off:]
			in := a.Decode(b, addr)
			if in.Len != a.MaxLen() || in.Addr != addr {
				t.Fatalf("sm_%d %#x: Decode(% x) = %+v: not one instruction of %d bytes", sm, addr, b[:min(len(b), 16)], in, a.MaxLen())
			}
			if in.Kind != Invalid {
				if again := a.Decode(b[:in.Len], addr); again != in {
					t.Fatalf("sm_%d %#x: Decode = %+v, on its own %d bytes %+v", sm, addr, in, in.Len, again)
				}
				if w := binary.LittleEndian.Uint64(b); sm < 70 && addr%32 != 0 && (in.Kind == Jump || in.Kind == CondJump) && w>>52 != p6BRA && in.Target <= addr &&
					!(w>>52 == p6CONT && loopHeadSet(code, in.Target, addr)) {
					t.Fatalf("sm_%d %#x: reconvergence jump (% x) back to %#x", sm, addr, b[:8], in.Target)
				}
			}
			if in.Kind == IndirectJump {
				for _, x := range a.JumpTable(mem, nil, in, to) {
					if !to.Valid(x) {
						t.Fatalf("sm_%d %#x: table entry %#x outside the procedure", sm, addr, x)
					}
				}
			}
			if in.Kind == Call || in.Kind == IndirectCall {
				CallBefore(a, mem, in.End())
			}
			a.PLTSlot(b, addr)
			off += in.Len
		}
	})
}

// cubinSeeds adds up to n windows of size bytes of the kernels of the
// cubins matching glob, behind the byte that picks their generation.
func cubinSeeds(f *testing.F, glob string, n, size int) {
	paths, _ := filepath.Glob(glob)
	added := 0
	for _, p := range paths {
		if strings.HasSuffix(p, ".license") || added >= n {
			continue
		}
		raw, err := os.ReadFile(p)
		if err != nil || len(raw) < 64 {
			continue
		}
		sm := int(raw[48])
		pick := -1
		for i, g := range sassGens {
			if g == sm || g == 75 && sm >= 70 && sm < 90 {
				pick = i
			}
		}
		if pick < 0 {
			continue
		}
		binary.LittleEndian.PutUint32(raw[20:], 1) // e_version: the CUDA ABI's
		ef, err := elf.NewFile(bytes.NewReader(raw))
		if err != nil {
			continue
		}
		for _, s := range ef.Sections {
			if !strings.HasPrefix(s.Name, ".text.") || added >= n {
				continue
			}
			b, err := s.Data()
			if err != nil || len(b) == 0 {
				continue
			}
			f.Add(append([]byte{byte(pick)}, b[:min(size, len(b))]...))
			added++
		}
	}
}

// loopHeadSet reports whether a Pascal PCNT of code (at fuzzBase) before
// addr sets head, at or before itself: a CONT may then go back to head.
func loopHeadSet(code []byte, head, addr uint64) bool {
	for off := 0; off+8 <= len(code) && uint64(fuzzBase+off) < addr; off += 8 {
		a := uint64(fuzzBase + off)
		if a%32 == 0 {
			continue
		}
		if t, op, ok := pascalSets(binary.LittleEndian.Uint64(code[off:]), a); ok && op == p6CONT && t == head && t <= a {
			return true
		}
	}
	return false
}
