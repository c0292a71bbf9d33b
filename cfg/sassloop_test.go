package cfg

import (
	"encoding/binary"
	"testing"

	"bloop/havlak"
	"bloop/isa"
	"bloop/loader"
)

// Words of Pascal SASS (sm_60-62), built from the fields isa/sass.go
// decodes: the opcode in bits 52-63 (SYNC's in 48-63), the guard
// predicate in bits 16-19 (7 PT, 8 !P0), the condition code in bits 0-4
// (15 always), a branch's or a point's offset in bits 20-43 from the next
// instruction.
const (
	p6Ctl  = 0x001fbc00fde007ef // a bundle's scheduling word
	p6Nop  = 0x50b0000000070f00 // stands for any other instruction (LDS, ATOMS.CAST.SPIN, ISETP)
	p6Exit = 0xe30000000007000f
)

func p6Branch(op, pred, at, to uint64) uint64 {
	return op<<52 | (to-at-8)&0xffffff<<20 | pred<<16 | 0xf
}

func p6Point(op, at, to uint64) uint64 { return op<<52 | (to-at-8)&0xffffff<<20 }

func p6Pop(op, pred uint64) uint64 {
	if op == 0xf0f8 {
		return op<<48 | pred<<16 | 0xf
	}
	return op<<52 | pred<<16 | 0xf
}

// Words of Volta's SASS (sm_70 on): the opcode in bits 0-11, the guard
// predicate in bits 12-15, a branch's word offset in bits 34-81 and its
// second predicate (PT) in bits 87-90.
func v7Bra(pred, at, to uint64) [2]uint64 {
	words := (to - at - 16) / 4
	return [2]uint64{0x947 | pred<<12 | words<<34, words>>30&0x3ffff | 7<<23}
}

var (
	v7Nop   = [2]uint64{0x7918, 0x003fde0000000000}
	v7Exit  = [2]uint64{0x794d, 0x003fde0003800000}
	v7Bssy  = [2]uint64{0x000000a000007945, 0x003fde0003800000}
	v7Bsync = [2]uint64{0x7941, 0x003fde0003800000}
)

// TestSASSRetryLoops: the retry loops of an atomic operation that the GPU
// cannot do in one instruction (a 64-bit add on shared memory: load,
// add, ATOMS.CAST.SPIN, again while it failed; NVIDIA's SASS reference
// for ATOMS) are loops, however the compiler closes them. On Volta on, and
// on Pascal in the simplest form, a branch goes back; Pascal can also
// leave through a SYNC or a BRK and, in a PCNT loop, go back with CONT,
// which NVIDIA's SASS reference makes the loop's final looping branch
// with the PCNT inside the loop and its point the loop's head: before
// the CONT, where the other points lie after their SYNC or BRK.
// quicksilver-sm_70-dr's inlined atomicAdd(unsigned long long*) has the
// Volta form (0x44c50: LDS, two adds, a shared-memory atomic, two
// compares, @!P0 BRA 0x44c50), and its --gpucfg golden's loop there.
func TestSASSRetryLoops(t *testing.T) {
	const (
		bra  = 0xe24
		ssy  = 0xe29
		pbk  = 0xe2a
		pcnt = 0xe2b
		brk  = 0xe34
		cont = 0xe35
		sync = 0xf0f8
		pt   = 7
		p0   = 0
		np0  = 8
		p1   = 1
	)
	type loop struct{ header, parent uint64 } // block starts; parent 0: top level
	for _, tc := range []struct {
		name  string
		sm    int
		code  [][2]uint64 // from 0x1000, 8 bytes (Pascal, hi unused) or 16 apart
		loops []loop
	}{
		{"pascal, a branch back", 62, p6([]uint64{
			p6Ctl, p6Nop, p6Nop, p6Branch(bra, np0, 0x1018, 0x1008),
			p6Ctl, p6Exit,
		}), []loop{{0x1008, 0}}},
		{"pascal, out through SYNC", 62, p6([]uint64{
			p6Ctl, p6Point(ssy, 0x1008, 0x1040), p6Nop, p6Pop(sync, p0),
			p6Ctl, p6Branch(bra, pt, 0x1028, 0x1010), p6Nop, p6Nop,
			p6Ctl, p6Exit,
		}), []loop{{0x1010, 0}}},
		{"pascal, out through BRK", 62, p6([]uint64{
			p6Ctl, p6Point(pbk, 0x1008, 0x1040), p6Nop, p6Pop(brk, p0),
			p6Ctl, p6Branch(bra, pt, 0x1028, 0x1010), p6Nop, p6Nop,
			p6Ctl, p6Exit,
		}), []loop{{0x1010, 0}}},
		{"pascal, back through CONT to the PCNT", 62, p6([]uint64{
			p6Ctl, p6Point(pbk, 0x1008, 0x1040), p6Point(pcnt, 0x1010, 0x1010), p6Nop,
			p6Ctl, p6Pop(brk, p0), p6Pop(cont, pt), p6Nop,
			p6Ctl, p6Exit,
		}), []loop{{0x1010, 0}}},
		{"pascal, CONT loops nested: the outer CONT after the inner loop", 62, p6([]uint64{
			p6Ctl, p6Point(pbk, 0x1008, 0x1080), p6Point(pcnt, 0x1010, 0x1010), p6Point(pbk, 0x1018, 0x1060),
			p6Ctl, p6Point(pcnt, 0x1028, 0x1028), p6Nop, p6Pop(brk, p0),
			p6Ctl, p6Pop(cont, pt), p6Nop, p6Nop,
			p6Ctl, p6Pop(brk, p1), p6Pop(cont, pt), p6Nop,
			p6Ctl, p6Exit,
		}), []loop{{0x1010, 0}, {0x1028, 0x1010}}},
		{"pascal, inner PCNT loop closed by a branch back", 62, p6([]uint64{
			p6Ctl, p6Point(pbk, 0x1008, 0x1080), p6Point(pcnt, 0x1010, 0x1010), p6Point(pbk, 0x1018, 0x1060),
			p6Ctl, p6Point(pcnt, 0x1028, 0x1028), p6Pop(cont, p1), p6Pop(brk, p0),
			p6Ctl, p6Branch(bra, pt, 0x1048, 0x1028), p6Nop, p6Nop,
			p6Ctl, p6Pop(brk, p1), p6Pop(cont, pt), p6Nop,
			p6Ctl, p6Exit,
		}), []loop{{0x1010, 0}, {0x1028, 0x1010}}},
		{"volta, a branch back inside BSSY and BSYNC", 70, [][2]uint64{
			v7Bssy, v7Bra(p0, 0x1010, 0x10b0), v7Nop, v7Nop,
			v7Nop, v7Bra(np0, 0x1050, 0x1030), v7Bra(pt, 0x1060, 0x10b0), v7Nop,
			v7Nop, v7Nop, v7Nop, v7Bsync, v7Exit,
		}, []loop{{0x1030, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const lo = 0x1000
			var b []byte
			for _, w := range tc.code {
				b = binary.LittleEndian.AppendUint64(b, w[0])
				if tc.sm >= 70 {
					b = binary.LittleEndian.AppendUint64(b, w[1])
				}
			}
			hi := lo + uint64(len(b))
			img := loader.FromSections(loader.CUDA, []*loader.Section{{Name: ".text.k", Addr: lo, Data: b}}, nil)
			arch := isa.BindCUDA(tc.sm, isa.CUDACode{Mem: img, Procs: [][2]uint64{{lo, hi}}})
			g, err := Build(img, lo, lo, hi, Options{Arch: arch})
			if err != nil {
				t.Fatal(err)
			}
			succs := g.Succs()
			var got []loop
			for _, l := range havlak.Find(len(succs), g.Entry, succs).Loops {
				x := loop{header: g.Blocks[l.Header].Start}
				if l.Parent != nil {
					x.parent = g.Blocks[l.Parent.Header].Start
				}
				got = append(got, x)
			}
			if len(got) != len(tc.loops) {
				t.Fatalf("loops %#x, want %#x", got, tc.loops)
			}
			for i := range got {
				if got[i] != tc.loops[i] {
					t.Errorf("loops %#x, want %#x", got, tc.loops)
				}
			}
		})
	}
}

// p6 is Pascal code as the table's rows hold it.
func p6(words []uint64) [][2]uint64 {
	out := make([][2]uint64, len(words))
	for i, w := range words {
		out[i][0] = w
	}
	return out
}
