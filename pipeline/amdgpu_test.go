package pipeline

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bloop/internal/testenv"
	"bloop/loader"
	"bloop/source"
	"bloop/structure"
)

// AMD GPU code objects: two OpenCL C sources (hpcstruct-amdgpu/src) built
// for gfx908 and gfx90a at -O0, -O2 and -O3. hpcstruct wrote structure
// files for the gfx90a ones (TestHPCStructReferences compares them) and
// aborts on the gfx908 ones.
const amdgpuDir = "../../shared/hpcstruct-amdgpu"

// amdgpuLoops are the loops per procedure that each build of a source
// has, gfx908 and gfx90a alike, as nests of header lines ("13[ 13[]]": a
// loop of line 13 holding one), in the default mode given the sources and
// in compat mode (hpcstruct's: line 0 where the loop's exit branches have
// no line, and at -O0 the code after a call out of the loop). The
// sources' loops: stencil.cl smooth_point 12[ 13[]], stencil 22 (calling
// smooth_point), reduce 30 and 33, search 42; branchy.cl histo 21,
// collatz 33 (a do-while, its condition on 36). clang unrolls the loops of
// constant trip count at -O2: smooth_point's two, inlined into stencil,
// and reduce's second (64 lanes, 6 halvings).
var amdgpuLoops = map[string][2]string{
	"stencil-O0": {"weight: | smooth_point: 12[ 13[]] | stencil: 22[] | reduce: 30[] 33[] | search: 42[]",
		"weight: | smooth_point: 13[ 13[]] | stencil: 22[] | reduce: 0[] 0[] | search: 0[]"},
	"stencil-O2": {"stencil: 22[] | reduce: 30[] | search: 42[]", "stencil: 0[] | reduce: 0[] | search: 0[]"},
	"stencil-O3": {"stencil: 22[] | reduce: 30[] | search: 42[]", "stencil: 0[] | reduce: 0[] | search: 0[]"},
	"branchy-O0": {"classify: | histo: 21[] | collatz: 33[]", "classify: | histo: 21[] | collatz: 0[]"},
	"branchy-O2": {"histo: 21[] | collatz: 33[]", "histo: 0[] | collatz: 0[]"},
	"branchy-O3": {"histo: 21[] | collatz: 33[]", "histo: 0[] | collatz: 0[]"},
}

// TestAMDGPULoops analyses all 12 code objects in both modes without a
// problem, and checks their loops: the table above, so the gfx908 build
// of a source and -O level has the loops of the gfx90a one, which match
// hpcstruct's in compat mode; and in the default mode every loop is on a
// loop statement of the source.
func TestAMDGPULoops(t *testing.T) {
	bins, _ := filepath.Glob(filepath.Join(amdgpuDir, "bin", "*-gfx*"))
	if len(bins) == 0 {
		testenv.Absent(t, "no AMD GPU code objects")
	}
	src := filepath.Join(amdgpuDir, "src")
	finder := &source.Finder{Dirs: []string{src}}
	for _, bin := range bins {
		name := filepath.Base(bin)
		key := strings.Split(name, "-")[0] + "-" + name[strings.LastIndexByte(name, '-')+1:]
		want, ok := amdgpuLoops[key]
		if !ok {
			t.Errorf("%s: no expected loops", name)
			continue
		}
		for i, compat := range []bool{false, true} {
			doc := amdgpuStructure(t, bin, Options{Workers: 2, Dyninst: policyIf(compat), SourceDirs: []string{src}})
			if got := loopNests(doc.Root); got != want[i] {
				t.Errorf("%s compat=%v: loops\n\t%s\nwant\n\t%s", name, compat, got, want[i])
			}
			if compat {
				continue
			}
			// Every procedure has a line: its entry's, at its declaration
			// or the first statement after it; the declaration's where
			// clang's line-0 row at the entry (-O2, -O3) hides it.
			for _, p := range findAll(doc.Root, "P") {
				fname, line := p.Value("ln"), 0
				fmt.Sscan(p.Value("l"), &line)
				if decl := declLine(t, filepath.Join(src, strings.Split(name, "-")[0]+".cl"), fname); line < decl || line > decl+2 {
					t.Errorf("%s: P %s l=%d, want its declaration's line %d or the next two", name, fname, line, decl)
				}
			}
			for _, l := range findAll(doc.Root, "L") {
				f, line := l.Value("f"), 0
				fmt.Sscan(l.Value("l"), &line)
				lines := finder.LoopLines(filepath.Join(src, filepath.Base(f)))
				if !slices.Contains(lines, line) {
					t.Errorf("%s: loop at %s:%d, where the source has none (its loops: %v)", name, f, line, lines)
				}
			}
		}
	}
}

// declLine is the line of path where function name is declared: the
// first that has name followed by "(" after a space.
func declLine(t *testing.T, path, name string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, " "+name+"(") {
			return i + 1
		}
	}
	t.Fatalf("%s: no declaration of %s", path, name)
	return 0
}

// amdgpuStructure is bloop's structure of bin under opt, parsed; a
// procedure problem fails the test.
func amdgpuStructure(t *testing.T, bin string, opt Options) *structure.Doc {
	t.Helper()
	img, err := Open(bin, loader.Options{Workers: 2}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !img.Arch.IsAMDGPU() {
		t.Errorf("%s: arch %s", bin, img.Arch)
	}
	mod, probs := Analyze(img, opt)
	for _, p := range probs {
		t.Errorf("%s: %v", bin, p)
	}
	var buf bytes.Buffer
	if err := structure.WriteXML(&buf, []*structure.Module{mod}, false); err != nil {
		t.Fatal(err)
	}
	doc, err := structure.Parse(&buf, bin)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// loopNests writes the loops of each procedure, in document order, as
// "proc: 21[ 22[]] 30[]".
func loopNests(root *structure.Node) string {
	var procs []string
	var nest func(n *structure.Node) string
	nest = func(n *structure.Node) string {
		var s string
		for _, c := range n.Children {
			switch c.Tag {
			case "L":
				s += " " + c.Value("l") + "[" + nest(c) + "]"
			case "A":
				s += nest(c)
			}
		}
		return s
	}
	for _, p := range findAll(root, "P") {
		procs = append(procs, p.Value("ln")+":"+nest(p))
	}
	return strings.Join(procs, " | ")
}

// findAll lists the elements with tag under n, in document order.
func findAll(n *structure.Node, tag string) []*structure.Node {
	var out []*structure.Node
	for _, c := range n.Children {
		if c.Tag == tag {
			out = append(out, c)
		}
		out = append(out, findAll(c, tag)...)
	}
	return out
}
