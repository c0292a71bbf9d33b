package pipeline

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"bloop/internal/testenv"
	"bloop/isa"
	"bloop/loader"
	"bloop/structure"
)

// consistent runs the whole pipeline on bin and checks what hpcprof needs:
// no procedure skipped, the XML well-formed and valid, every P entry unique.
func consistent(t *testing.T, bin string) {
	img, err := loader.Open(bin, loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mod, probs := Analyze(img, Options{})
	var bugs []*Problem
	for _, p := range probs {
		// Bad input is worked around; these mean bloop itself went wrong.
		if p.Kind == KindInternal || p.Kind == KindRepaired || p.Kind == KindGraph {
			bugs = append(bugs, p)
		}
	}
	for i, e := range bugs {
		if i == 5 {
			t.Errorf("... %d in all", len(bugs))
			break
		}
		t.Errorf("%s: %v", bin, e)
	}
	var buf bytes.Buffer
	if err := structure.WriteXML(&buf, []*structure.Module{mod}, false); err != nil {
		t.Fatal(err)
	}
	doc, err := structure.Parse(&buf, bin)
	if err != nil {
		t.Fatalf("output does not parse: %v", err)
	}
	seen := map[string]bool{}
	var walk func(n *structure.Node)
	walk = func(n *structure.Node) {
		if n.Tag == "P" {
			v, _ := n.Get("v")
			if seen[v] {
				t.Errorf("%s: two procedures at %s", bin, v)
			}
			seen[v] = true
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(doc.Root)
	if len(seen) == 0 {
		t.Errorf("%s: no procedures", bin)
	}
}

// TestCorpusConsistency covers every binary of the testdata corpus.
func TestCorpusConsistency(t *testing.T) {
	for _, b := range corpusBinaries(t) {
		t.Run(filepath.Base(b), func(t *testing.T) { consistent(t, b) })
	}
}

// TestDebianDebugBinaries runs on real optimized libraries with separate
// debug files when the -dbg packages are installed (see docs/benchmarks.md).
func TestDebianDebugBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	gsl, _ := filepath.Glob("/usr/lib/x86_64-linux-gnu/libgsl.so.27.*")
	cands := append([]string{"/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30", "/usr/bin/python3.11"}, gsl...)
	ran := 0
	for _, b := range cands {
		if _, err := os.Stat(b); err != nil {
			continue
		}
		ran++
		t.Run(filepath.Base(b), func(t *testing.T) { consistent(t, b) })
	}
	if ran == 0 {
		testenv.Absent(t, "no -dbg packages installed")
	}
}

// TestCorruptInput flips bytes in the code and DWARF of a binary: the
// pipeline must report problems, never panic or hang.
func TestCorruptInput(t *testing.T) {
	src := "../testdata/bin/tmpl-gcc12-O2"
	good, err := os.ReadFile(src)
	if err != nil {
		t.Fatal("corpus missing")
	}
	ef, err := elf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	var targets [][2]uint64
	for _, s := range ef.Sections {
		switch s.Name {
		case ".text", ".debug_info", ".debug_line", ".debug_abbrev", ".debug_rnglists", ".eh_frame", ".gcc_except_table", ".debug_str":
			targets = append(targets, [2]uint64{s.Offset, s.Size})
		}
	}
	ef.Close()
	p := filepath.Join(t.TempDir(), "corrupt")
	seed := uint32(7)
	rnd := func(n uint64) uint64 {
		seed = seed*1664525 + 1013904223
		return uint64(seed>>8) % n
	}
	for round := 0; round < 40; round++ {
		b := append([]byte(nil), good...)
		for k := 0; k < 64; k++ {
			sec := targets[rnd(uint64(len(targets)))]
			if sec[1] == 0 {
				continue
			}
			b[sec[0]+rnd(sec[1])] = byte(rnd(256))
		}
		os.WriteFile(p, b, 0o644)
		img, err := loader.Open(p, loader.Options{})
		if err != nil {
			continue
		}
		mod, _ := Analyze(img, Options{Workers: 2})
		var buf bytes.Buffer
		if err := structure.WriteXML(&buf, []*structure.Module{mod}, false); err != nil {
			t.Fatal(err)
		}
		if _, err := structure.Parse(&buf, "corrupt"); err != nil {
			t.Errorf("round %d: output of a corrupt input is not a valid structure file: %v", round, err)
		}
	}
}

// TestOtherArchWithoutCFG: an image of an architecture without a decoder
// still gets procedures, statements and inlined code, without loops and
// without errors. Every machine the loader reads has a decoder, so the
// image is an x86-64 one whose machine is then changed to one isa has no
// row for (RISC-V): the fallback runs as it would for a new architecture
// the loader learns before isa does.
func TestOtherArchWithoutCFG(t *testing.T) {
	img, err := loader.Open(testenv.Fixture(t, "../testdata/bin/inline-gcc12-O2"), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const fake = elf.EM_RISCV
	if isa.For(fake) != nil {
		t.Fatalf("isa has a decoder for %v: pick another machine for the test", fake)
	}
	img.Machine = fake
	mod, probs := Analyze(img, Options{Engine: DWARF})

	if len(probs) > 0 {
		t.Fatalf("problems: %v", probs)
	}
	stmts, loops, inl := 0, 0, 0
	for _, f := range mod.Files {
		for _, pr := range f.Procs {
			structure.Walk(pr, func(s *structure.Scope) {
				switch {
				case s.Kind == structure.Stmt:
					stmts++
				case s.Kind == structure.Loop:
					loops++
				case s.IsCallee():
					inl++
				}
			})
		}
	}
	if stmts == 0 || inl == 0 || loops != 0 {
		t.Errorf("%d statements, %d inlined callees, %d loops; want statements and inlines, no loops", stmts, inl, loops)
	}
}
