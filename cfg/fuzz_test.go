package cfg

import (
	"debug/elf"
	"path/filepath"
	"reflect"
	"testing"

	"bloop/havlak"
	"bloop/isa"
	"bloop/loader"
)

// fuzzArches are the instruction sets the first input byte selects;
// fuzzSMs the generation of the CUDA ones, by index.
var (
	fuzzArches = []loader.Arch{loader.AMD64, loader.ARM64, loader.PPC64LE, loader.CUDA, loader.CUDA, loader.CUDA, loader.AMDGPU}
	fuzzSMs    = map[int]int{3: 62, 4: 75, 5: 90}
)

// FuzzBuild: any code, on any instruction set, gives a graph whose blocks
// lie in the procedure and tile the decoded instructions, whose edges
// name blocks, and which is the same graph when built again; the loop
// finder accepts it. The first byte picks the instruction set (its low
// bits) and options.
func FuzzBuild(f *testing.F) {
	for i, dir := range []string{"bin", "bin-arm64", "bin-ppc64le"} {
		for _, name := range []string{"loops-gcc12-O2", "switch-gcc12-O2", "switch-clang14-O2"} {
			for _, code := range procSeeds(filepath.Join("../testdata", dir, name), 3) {
				f.Add(append([]byte{byte(i)}, code...))
			}
		}
	}
	// AMD GPU kernels, with calls and loops at -O0, decoded as Dyninst
	// does (0x80): the first selector byte with that bit that picks
	// AMDGPU.
	amd := byte(0x80)
	for fuzzArches[int(amd)%len(fuzzArches)] != loader.AMDGPU {
		amd++
	}
	for _, name := range []string{"stencil-gfx90a-clang14-O0", "branchy-gfx908-clang14-O2"} {
		for _, code := range procSeeds(filepath.Join("../../shared/hpcstruct-amdgpu/bin", name), 3) {
			f.Add(append([]byte{amd}, code...))
		}
	}
	const lo = 0x10000
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 2 {
			return
		}
		sel, code := in[0], in[1:]
		k := int(sel) % len(fuzzArches)
		arch := fuzzArches[k]
		hi := lo + uint64(len(code))
		// The code is also readable as data above it, so that jump tables
		// find entries.
		img := loader.FromSections(arch,
			[]*loader.Section{{Name: ".text", Addr: lo, Data: code}},
			[]*loader.Section{{Name: ".rodata", Addr: hi + 0x1000, Data: code}})
		opt := Options{NoReturn: func(x uint64) bool { return sel&0x40 != 0 && x%3 == 0 }}
		if sel&0xb0 != 0 {
			dy := &Dyninst{FallOut: sel&0x10 != 0, Tables: sel&0x20 != 0}
			if sel&0x80 != 0 {
				dy.Decode = isa.Dyninst12For(img.Machine)
			}
			opt.Dyninst = dy
		}
		if sm, ok := fuzzSMs[k]; ok {
			opt = Options{Arch: isa.BindCUDA(sm, isa.CUDACode{Mem: img, Procs: [][2]uint64{{lo, hi}},
				Tables: map[uint64][]uint64{lo: {lo + 16, hi + 16}}})}
		}
		g, err := Build(img, lo, lo, hi, opt)
		if err != nil {
			return
		}
		checkGraph(t, g, lo, hi)
		again, err := Build(img, lo, lo, hi, opt)
		if err != nil || !reflect.DeepEqual(shape(g), shape(again)) {
			t.Fatalf("a second build differs: %v", err)
		}
		succs := g.Succs()
		forest := havlak.Find(len(succs), g.Entry, succs)
		for _, l := range forest.Loops {
			if l.Header < 0 || l.Header >= len(g.Blocks) {
				t.Fatalf("loop header %d of %d blocks", l.Header, len(g.Blocks))
			}
		}
	})
}

// checkGraph asserts the invariants every later phase relies on.
func checkGraph(t *testing.T, g *Graph, lo, hi uint64) {
	t.Helper()
	if g.Entry < 0 || g.Entry >= len(g.Blocks) {
		t.Fatalf("entry %d of %d blocks", g.Entry, len(g.Blocks))
	}
	for i, b := range g.Blocks {
		if b.Start < lo || b.End > hi || b.End <= b.Start || len(b.Insts) == 0 {
			t.Fatalf("block %d [%#x,%#x) with %d instructions, procedure [%#x,%#x)", i, b.Start, b.End, len(b.Insts), lo, hi)
		}
		if i > 0 && g.Blocks[i-1].Start >= b.Start {
			t.Fatalf("blocks %d and %d out of order", i-1, i)
		}
		if b.Insts[0].Addr != b.Start {
			t.Fatalf("block %d starts at %#x, its first instruction at %#x", i, b.Start, b.Insts[0].Addr)
		}
		for j := 1; j < len(b.Insts); j++ {
			if b.Insts[j].Addr <= b.Insts[j-1].Addr {
				t.Fatalf("block %d: instructions out of order at %#x", i, b.Insts[j].Addr)
			}
		}
		for _, s := range append(append([]int(nil), b.Succs...), b.Preds...) {
			if s < 0 || s >= len(g.Blocks) {
				t.Fatalf("block %d: edge to %d of %d blocks", i, s, len(g.Blocks))
			}
		}
	}
}

// procSeeds returns the code of up to n procedures of an ELF file, from
// its symbol table: whole procedures give the builder real shapes (loops,
// switches through tables).
func procSeeds(path string, n int) [][]byte {
	ef, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer ef.Close()
	syms, _ := ef.Symbols()
	text := ef.Section(".text")
	if text == nil {
		return nil
	}
	data, err := text.Data()
	if err != nil {
		return nil
	}
	var out [][]byte
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 || s.Value < text.Addr || s.Value+s.Size > text.Addr+uint64(len(data)) {
			continue
		}
		out = append(out, data[s.Value-text.Addr:s.Value-text.Addr+s.Size])
		if len(out) == n {
			break
		}
	}
	return out
}
