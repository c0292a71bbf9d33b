package unwind

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-delve/delve/pkg/dwarf/frame"

	"bloop/internal/testenv"
	"bloop/isa"
	"bloop/loader"
	"bloop/structure"
)

// ehTable reads .eh_frame with delve's pkg/dwarf/frame: the cross-check,
// never the unwinder.
func ehTable(path string) (frame.FrameDescriptionEntries, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sec := f.Section(".eh_frame")
	if sec == nil {
		return nil, fmt.Errorf("%s: no .eh_frame", path)
	}
	data, err := sec.Data()
	if err != nil {
		return nil, err
	}
	fdes, err := frame.Parse(data, binary.LittleEndian, 0, 8, sec.Addr)
	if err != nil {
		return nil, err
	}
	// FDEForPC binary-searches: the list must be sorted.
	sort.Slice(fdes, func(i, j int) bool { return fdes[i].Begin() < fdes[j].Begin() })
	return fdes, nil
}

// agreement counts, per instruction, whether the recipe's CFA rule and
// return-address slot match .eh_frame's, where .eh_frame gives a register
// plus offset.
type agreement struct {
	agree, compared, uncovered, noRecipe int
	bad                                  []string
}

func (a agreement) pct() float64 {
	if a.compared == 0 {
		return 100
	}
	return 100 * float64(a.agree) / float64(a.compared)
}

// dwarfRegs are an architecture's DWARF numbers of SP, BP and the
// return-address column; link says the return address arrives in a
// register (LR) rather than on the stack.
type dwarfRegs struct {
	sp, bp, ra uint64
	link       bool
}

var dwarfRegsOf = map[elf.Machine]dwarfRegs{
	elf.EM_X86_64:  {sp: 7, bp: 6, ra: 16},
	elf.EM_AARCH64: {sp: 31, bp: 29, ra: 30, link: true},
	elf.EM_PPC64:   {sp: 1, bp: 31, ra: 65, link: true},
}

func compareEHFrame(t testing.TB, path string, maxBad int) agreement {
	img, err := loader.Open(path, loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return compareModule(t, NewModule(img), path, maxBad)
}

func compareModule(t testing.TB, m *Module, path string, maxBad int) agreement {
	img := m.Img
	fdes, err := ehTable(path)
	if err != nil {
		t.Fatal(err)
	}
	var a agreement
	dw := dwarfRegsOf[img.Machine]
	ar := isa.For(img.Machine)
	var sync []structure.Range
	if dw.link {
		sync = clangRanges(t, path)
	}
	for pi, p := range m.Procs() {
		sec := img.SectionAt(p.Lo)
		m.Recipes(pi)
		for addr := p.Lo; addr < p.Hi; {
			op := ar.Decode(img.Bytes(addr, min(addr+uint64(ar.MaxLen()), sec.End())), addr)
			pc := addr
			addr += uint64(op.Len)
			if inRanges(sync, pc) && op.Kind != isa.Call && op.Kind != isa.IndirectCall {
				continue // synchronous tables hold at call sites only
			}
			if dw.link && op.Kind == isa.Invalid {
				continue // data in the code: ppc64's traceback tables
			}
			fde, err := fdes.FDEForPC(pc)
			if err != nil {
				a.uncovered++
				continue
			}
			fc, err := fde.EstablishFrame(pc)
			if err != nil || fc.CFA.Rule != frame.RuleCFA || (fc.CFA.Reg != dw.sp && fc.CFA.Reg != dw.bp) {
				continue
			}
			// With a link register, a return address with no rule, the
			// same value or another register's (ppc64's mflr r0) is
			// still in LR.
			ra, saved := fc.Regs[dw.ra]
			inLR := dw.link && (!saved || ra.Rule == frame.RuleSameVal || ra.Rule == frame.RuleRegister)
			if !inLR && (!saved || ra.Rule != frame.RuleOffset) {
				continue // e.g. the outermost frame marks the return address undefined
			}
			a.compared++
			r, ok := m.RecipeAt(pc)
			if !ok {
				a.noRecipe++
			}
			want := RegSP
			if fc.CFA.Reg == dw.bp {
				want = RegBP
			}
			cfaOK := r.CFA == want && r.CFAOff == fc.CFA.Offset || r.AltCFA == want && r.AltCFAOff == fc.CFA.Offset
			raOK := inLR && r.RAInLR || !inLR && (!r.RAInLR && r.RAOff == ra.Offset || r.AltRA && r.AltRAOff == ra.Offset)
			if ok && cfaOK && raOK {
				a.agree++
				continue
			}
			if len(a.bad) < maxBad {
				a.bad = append(a.bad, fmt.Sprintf("%#x in %s@%#x: eh_frame cfa=%s%+d, recipe %v", pc, p.Name, p.Lo, want, fc.CFA.Offset, r))
			}
		}
	}
	return a
}

// clangRanges returns the code of path's compilation units that clang
// compiled, by their DW_AT_producer. Clang 14's unwind tables for aarch64
// and ppc64 are synchronous: they hold at call sites, which is what
// exceptions need, and its CFI comes at the end of a prologue (aarch64)
// or before it (ppc64), with none for epilogues.
func clangRanges(t testing.TB, path string) []structure.Range {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		return nil // no DWARF: the Debian libraries, built by gcc
	}
	var out []structure.Range
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		if p, _ := e.Val(dwarf.AttrProducer).(string); strings.Contains(p, "clang") {
			rs, _ := d.Ranges(e)
			for _, x := range rs {
				out = append(out, structure.Range{Lo: x[0], Hi: x[1]})
			}
		}
		r.SkipChildren()
	}
	return structure.MergeRanges(out)
}

func inRanges(rs []structure.Range, a uint64) bool {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Hi > a })
	return i < len(rs) && rs[i].Lo <= a
}

// TestRecipeAccuracy compares recipes with .eh_frame at every instruction
// of the system C and C++ libraries, bash (shrink-wrapped procedures with
// jump tables) and the x86-64 corpus binaries.
func TestRecipeAccuracy(t *testing.T) {
	paths := []string{"/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/usr/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libgfortran.so.5", "/usr/lib/x86_64-linux-gnu/libgomp.so.1",
		"/usr/bin/bash"}
	nlibs := len(paths)
	corpus, _ := filepath.Glob("../testdata/bin/*")
	extra, _ := filepath.Glob("../testdata/prof/bin/*")
	corpus = append(corpus, extra...)
	for _, c := range corpus {
		if f, err := elf.Open(c); err == nil {
			if f.Machine == elf.EM_X86_64 {
				paths = append(paths, c)
			}
			f.Close()
		}
	}
	if testing.Short() {
		paths = paths[nlibs:]
	}
	maxBad := 0
	if os.Getenv("UNWIND_DEBUG") != "" {
		maxBad = 100000
	}
	var all agreement
	var mu sync.Mutex
	t.Run("bins", func(t *testing.T) {
		for _, p := range paths {
			t.Run(filepath.Base(p), func(t *testing.T) {
				t.Parallel()
				testenv.NeedFile(t, p, "libc6, libstdc++6, libgfortran5, libgomp1 or bash")

				a := compareLogged(t, p, maxBad)
				// Compiler-generated code: the corpus binaries and the libraries
				// (whose few hand-written routines are simple leaves).
				if a.pct() < 99 {
					t.Errorf("%s: only %.2f%% agreement", p, a.pct())
				}
				mu.Lock()
				all.agree += a.agree
				all.compared += a.compared
				mu.Unlock()
			})
		}
	})
	t.Logf("all: %.3f%% of %d", all.pct(), all.compared)
}

// TestStrippedAccuracy repeats the comparison on images reduced to what a
// stripped file keeps: code, exported (dynamic) symbols, PLT stubs and
// exception tables. Procedure bounds then come mostly from inference.
func TestStrippedAccuracy(t *testing.T) {
	paths := []string{"/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		"../testdata/bin/tmpl-gcc12-O2", "../testdata/bin/noreturn-gcc12-O2", "../testdata/bin/tmpl-clang14-O2"}
	if testing.Short() {
		paths = paths[2:]
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			t.Logf("%s: absent, skipped", p)
			continue
		}
		img, err := loader.Open(p, loader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st := loader.FromSections(img.Arch, img.Sections, nil)
		st.Path, st.CallSites = img.Path, img.CallSites
		dyn := map[uint64]bool{}
		if f, err := elf.Open(p); err == nil {
			syms, _ := f.DynamicSymbols()
			for _, s := range syms {
				if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
					dyn[s.Value] = true
				}
			}
			f.Close()
		}
		for _, f := range img.Funcs {
			if f.PLT || dyn[f.Addr] {
				st.Funcs = append(st.Funcs, f)
			}
		}
		m := NewModule(st)
		inferred := 0
		for _, pr := range m.Procs() {
			if pr.Inferred {
				inferred++
			}
		}
		a := compareModule(t, m, p, 0)
		t.Logf("%-28s stripped: %6.2f%% of %7d instructions agree (%d of %d procedures inferred)",
			filepath.Base(p), a.pct(), a.compared, inferred, len(m.Procs()))
		if a.pct() < 99 {
			t.Errorf("%s stripped: only %.2f%% agreement", p, a.pct())
		}
	}
}

// compareLogged is compareEHFrame, with its figures and disagreements
// in the test's log.
func compareLogged(t *testing.T, p string, maxBad int) agreement {
	t.Helper()
	a := compareEHFrame(t, p, maxBad)
	t.Logf("%-28s %6.2f%% of %7d instructions agree with .eh_frame (%d without recipe, %d not covered)",
		filepath.Base(p), a.pct(), a.compared, a.noRecipe, a.uncovered)
	for _, b := range a.bad {
		t.Log("  ", b)
	}
	return a
}
