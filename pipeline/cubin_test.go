package pipeline

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/dwarfscan"
	"bloop/dyninst"
	"bloop/internal/testenv"
	"bloop/loader"
	"bloop/structure"
)

// TestCubinsWithoutReference analyses the cubins hpcstruct wrote no
// structure file for (sm_90a, 16-byte instructions), in compat and default
// mode, and checks what can be checked without one: every function symbol
// is a procedure entered at its .text section's file offset (hpcstruct's
// layout), line tables give statements, DWARF inline records or NVIDIA's
// inlined calls in the line program (nvcc 12's -lineinfo cubin has no
// .debug_info) give inlined code, and there are loops in the default mode
// only (compat mode builds no graph of GPU code without --gpucfg; their
// count is TestSM90aLoops').
func TestCubinsWithoutReference(t *testing.T) {
	bins, _ := filepath.Glob("../../shared/hpctoolkit-tests/bin/*-sm_*")
	n := 0
	for _, bin := range bins {
		name := filepath.Base(bin)
		ref := filepath.Join(filepath.Dir(bin), "../struct", name+".hpcstruct")
		if strings.HasSuffix(name, ".license") {
			continue
		}
		if _, err := os.Stat(ref); err == nil {
			continue // compared exactly in TestHPCStructReferences
		}
		n++
		want, hasLines, inlined := cubinFuncs(t, bin)
		for _, compat := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/compat=%v", name, compat), func(t *testing.T) {
				opt := Options{Workers: 2, Dyninst: policyIf(compat)}
				img, err := Open(bin, loader.Options{Workers: 2}, opt)
				if err != nil {
					t.Fatal(err)
				}
				if img.Arch != loader.CUDA || img.InstSize != 16 {
					t.Errorf("arch %s, instructions of %d bytes; want cuda, 16", img.Arch, img.InstSize)
				}
				mod, probs := Analyze(img, opt)
				for _, p := range probs {
					t.Errorf("problem: %v", p)
				}
				var buf bytes.Buffer
				if err := structure.WriteXML(&buf, []*structure.Module{mod}, false); err != nil {
					t.Fatal(err)
				}
				doc, err := structure.Parse(&buf, name)
				if err != nil {
					t.Fatal(err)
				}
				c := countScopes(doc.Root)
				if len(c.procs) != len(want) {
					t.Errorf("%d procedures, want %d (the function symbols)", len(c.procs), len(want))
				}
				for sym, entry := range want {
					if got, ok := c.procs[sym]; !ok || got != entry {
						t.Errorf("procedure %s: entry %q, want %q", sym, got, entry)
					}
				}
				if c.stmts == 0 {
					t.Error("no statements")
				}
				if hasLines != (c.lined > 0) {
					t.Errorf("%d statements with a line; the cubin has a line table: %v", c.lined, hasLines)
				}
				if inlined != (c.callees > 0) {
					t.Errorf("%d inlined callees; the cubin has .debug_info or inlined calls in its line program: %v", c.callees, inlined)
				}
				if compat && c.loops > 0 {
					t.Errorf("%d loops, want none without --gpucfg", c.loops)
				}
				if !compat && c.loops == 0 {
					t.Error("no loops in the default mode")
				}
			})
		}
	}
	if n == 0 {
		testenv.Absent(t, "no reference cubins without a structure file")
	}
}

// cubinFuncs reads a cubin's function symbols with debug/elf (its
// e_version made 1) and gives the entry hpcstruct writes for each, in
// P v's spelling: its section's file offset plus its value. It also says
// whether the cubin has a line table, and whether it tells of inlined
// calls: DWARF procedures, or line rows with an NVIDIA inline context.
func cubinFuncs(t *testing.T, bin string) (entries map[string]string, lines, inlined bool) {
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[20:], 1)
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	entries = map[string]string{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Section == elf.SHN_UNDEF {
			continue
		}
		a := f.Sections[s.Section].Offset + s.Value
		entries[s.Name] = fmt.Sprintf("{[%#x-%#x)}", a, a+1)
	}
	return entries, f.Section(".debug_line") != nil, f.Section(".debug_info") != nil || lineContexts(t, f)
}

// lineContexts reports whether a row of a line program of f's .debug_line
// is inlined code (dwarfscan.LineRow.Context), reading the programs in
// turn from the section's start.
func lineContexts(t *testing.T, f *elf.File) bool {
	sec := f.Section(".debug_line")
	if sec == nil {
		return false
	}
	line, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	d, err := dwarfscan.New(dwarfscan.Sections{Line: line})
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off+4 <= len(line); off += 4 + int(binary.LittleEndian.Uint32(line[off:])) {
		p, err := d.LineProgram(&dwarfscan.Unit{StmtList: int64(off), AddrSize: 8})
		if err != nil || p == nil {
			t.Fatalf("line program at %#x: %v", off, err)
		}
		var row dwarfscan.LineRow
		for p.Next(&row) == nil {
			if row.Context != 0 {
				return true
			}
		}
	}
	return false
}

type scopeCounts struct {
	procs                        map[string]string // link name -> v
	stmts, lined, callees, loops int
}

func countScopes(root *structure.Node) scopeCounts {
	c := scopeCounts{procs: map[string]string{}}
	var walk func(n, parent *structure.Node)
	walk = func(n, parent *structure.Node) {
		switch n.Tag {
		case "P":
			link, ok := n.Get("ln")
			if !ok {
				link = n.Value("n")
			}
			c.procs[link] = n.Value("v")
		case "S":
			c.stmts++
			if n.Value("l") != "0" {
				c.lined++
			}
		case "A":
			if parent.Tag == "A" {
				c.callees++
			}
		case "L":
			c.loops++
		}
		for _, k := range n.Children {
			walk(k, n)
		}
	}
	walk(root, root)
	return c
}

// sm90aLoops are the loops of each kernel of inlines+loops.cu (the sources
// of ../shared/hpctoolkit-cuda/src): the lines of their headers, outermost
// first, nested ones after their parent; 48 is f4_inline's loop, inlined
// into f4_1's and f4_2's innermost loop.
var sm90aLoops = map[string][]int{
	"_Z2f1v":   nil,
	"_Z2f2v":   nil,
	"_Z4f3_1v": {24},
	"_Z4f3_2v": {29, 30},
	"_Z4f3_3v": {36, 37, 38},
	"_Z4f4_1v": {53, 48},
	"_Z4f4_2v": {58, 59, 48},
}

// TestSM90aLoops pins the loops bloop finds in the sm_90a cubins, which
// have no hpcstruct structure file: in the default mode and with
// --compat hpcstruct --gpucfg, each kernel has the loops of its source,
// each nested in the one before it, on the source's lines where the cubin
// has a line table (-0, -dr; -r has none: every line is 0).
func TestSM90aLoops(t *testing.T) {
	bins, _ := filepath.Glob("../../shared/hpctoolkit-tests/bin/inlines+loops-sm_90a-*")
	n := 0
	for _, bin := range bins {
		if strings.HasSuffix(bin, ".license") {
			continue
		}
		n++
		lined := !strings.HasSuffix(bin, "-r")
		for _, opt := range []Options{{Workers: 2}, {Workers: 2, Dyninst: dyninst.Hpcstruct, GPUCFG: true}} {
			t.Run(fmt.Sprintf("%s/compat=%v", filepath.Base(bin), opt.Dyninst != nil), func(t *testing.T) {
				img, err := Open(bin, loader.Options{Workers: 2}, opt)
				if err != nil {
					t.Fatal(err)
				}
				mod, probs := Analyze(img, opt)
				for _, p := range probs {
					t.Errorf("problem: %v", p)
				}
				seen := 0
				for _, f := range mod.Files {
					for _, p := range f.Procs {
						link := p.LinkName
						if link == "" {
							link = p.Name
						}
						want, ok := sm90aLoops[link]
						if !ok {
							if l := loopLines(p, nil); len(l) > 0 {
								t.Errorf("%s: loops %v, want none (not a kernel of inlines+loops.cu)", link, l)
							}
							continue
						}
						seen++
						got := loopLines(p, nil)
						if len(got) != len(want) {
							t.Errorf("%s: %d loops %v, want %d", link, len(got), got, len(want))
							continue
						}
						for i, g := range got {
							if g.depth != i+1 || lined && g.line != want[i] || !lined && g.line != 0 {
								t.Errorf("%s: loops %v, want lines %v nested in order (lines known: %v)", link, got, want, lined)
								break
							}
						}
					}
				}
				if seen != len(sm90aLoops) {
					t.Errorf("%d kernels of inlines+loops.cu, want %d", seen, len(sm90aLoops))
				}
			})
		}
	}
	if n == 0 {
		testenv.Absent(t, "no sm_90a cubins in ../../shared")
	}
}

type loopAt struct{ line, depth int }

// loopLines lists the loops under s in pre-order with their nesting depth.
func loopLines(s *structure.Scope, out []loopAt) []loopAt {
	var walk func(s *structure.Scope, depth int)
	walk = func(s *structure.Scope, depth int) {
		if s.Kind == structure.Loop {
			depth++
			out = append(out, loopAt{s.Line, depth})
		}
		for _, c := range s.Children {
			walk(c, depth)
		}
	}
	walk(s, 0)
	return out
}
