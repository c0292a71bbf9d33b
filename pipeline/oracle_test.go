package pipeline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"bloop/internal/testenv"
	"bloop/loader"
	"bloop/structure"
)

// site is one inlined call's call site: file and line.
type site struct {
	file string
	line int
}

func (s site) String() string { return fmt.Sprintf("%s:%d", s.file, s.line) }

// written is what bloop writes about one statement address: the call
// sites of the inlined calls around it, outermost first, cut into
// segments by the loops on the way (segment i lies between loop i-1 and
// loop i), and which call scope each site is.
type written struct {
	sites []site
	calls []int // call scope numbers, parallel to sites
	cuts  []int // index in sites where each loop begins a new segment
}

// writtenSites reads the JSON bloop writes for mod and returns what it
// says about the first address of every statement range, and the number of
// call scopes.
func writtenSites(t *testing.T, mod *structure.Module) (map[uint64][]written, []string) {
	var buf bytes.Buffer
	if err := structure.WriteJSON(&buf, []*structure.Module{mod}); err != nil {
		t.Fatal(err)
	}
	type scope struct {
		Kind     string      `json:"kind"`
		File     string      `json:"file"`
		Line     int         `json:"line"`
		Ranges   [][2]string `json:"ranges"`
		Inline   string      `json:"inline"`
		Children []*scope    `json:"children"`
	}
	var doc struct {
		Modules []struct {
			Files []struct {
				Procs []*scope `json:"procs"`
			} `json:"files"`
		} `json:"modules"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	out := map[uint64][]written{}
	var calls []string
	var walk func(s *scope, w written)
	walk = func(s *scope, w written) {
		switch {
		case s.Inline == "call":
			w.sites = append(w.sites[:len(w.sites):len(w.sites)], site{s.File, s.Line})
			w.calls = append(w.calls[:len(w.calls):len(w.calls)], len(calls))
			calls = append(calls, fmt.Sprintf("%v (under %v)", site{s.File, s.Line}, w.sites[:len(w.sites)-1]))
		case s.Kind == "L":
			w.cuts = append(w.cuts[:len(w.cuts):len(w.cuts)], len(w.sites))
		case s.Kind == "S":
			for _, r := range s.Ranges {
				a, err := strconv.ParseUint(r[0], 0, 64)
				if err != nil {
					t.Fatal(err)
				}
				out[a] = append(out[a], w)
			}
		}
		for _, c := range s.Children {
			walk(c, w)
		}
	}
	for _, m := range doc.Modules {
		for _, f := range m.Files {
			for _, p := range f.Procs {
				walk(p, written{})
			}
		}
	}
	return out, calls
}

// symbolizedSites asks llvm-symbolizer for the inlined frames at addrs and
// returns each address's call sites, outermost first: frame k's location
// is the call site of frame k-1.
func symbolizedSites(t *testing.T, sym, bin string, addrs []uint64) map[uint64][]site {
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "0x%x\n", a)
	}
	cmd := exec.Command(sym, "--inlining", "--no-demangle", "--functions=none", "--obj="+bin)
	cmd.Stdin = &in
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", sym, err)
	}
	out := map[uint64][]site{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	i := 0
	var frames []site
	flush := func() {
		if i >= len(addrs) {
			t.Fatalf("llvm-symbolizer answered more addresses than asked")
		}
		var calls []site
		for k := len(frames) - 1; k >= 1; k-- {
			calls = append(calls, frames[k])
		}
		out[addrs[i]] = calls
		i++
		frames = frames[:0]
	}
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			flush()
			continue
		}
		// FILE:LINE:COLUMN; the file may itself hold colons.
		f, rest, ok := cutLast(line)
		if !ok {
			t.Fatalf("llvm-symbolizer: unexpected line %q", line)
		}
		if _, err := strconv.Atoi(rest); err == nil {
			if g, l, ok := cutLast(f); ok {
				f, rest = g, l
			}
		}
		n, err := strconv.Atoi(rest)
		if err != nil {
			t.Fatalf("llvm-symbolizer: unexpected line %q", line)
		}
		frames = append(frames, site{f, n})
	}
	if i != len(addrs) {
		t.Fatalf("llvm-symbolizer answered %d of %d addresses", i, len(addrs))
	}
	return out
}

func cutLast(s string) (string, string, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// TestCallSitesOracle checks the inlined call sites bloop writes (DWARF
// engine, as the default modes place inlined code) against llvm-symbolizer
// --inlining at the first address of every statement range: the same
// nesting and each call's file and line (see matchSites for loops), and
// every call written must be confirmed at one address at least. DWARF 5
// call sites gcc encodes as DW_FORM_implicit_const included: hpcstruct
// writes those <unknown>:0, and only --compat hpcstruct does. The corpus,
// and, unless -short, Debian's libstdc++ debug build, python3.11 and libgsl
// with their -dbg packages.
func TestCallSitesOracle(t *testing.T) {
	sym := testenv.Need(t, "llvm-symbolizer")
	bins := corpusBinaries(t)
	gsl, _ := filepath.Glob("/usr/lib/x86_64-linux-gnu/libgsl.so.27.*")
	debian := append([]string{"/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30", "/usr/bin/python3.11"}, gsl...)
	for _, b := range debian {
		if _, err := os.Stat(b); err == nil && !testing.Short() {
			bins = append(bins, b)
		}
	}
	for _, bin := range bins {
		t.Run(filepath.Base(bin), func(t *testing.T) {
			img, err := loader.Open(bin, loader.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !img.HasInlineInfo() {
				t.Skip("no inline records")
			}
			dbg := bin
			if img.DebugFile != "" {
				dbg = img.DebugFile
			}
			mod, _ := Analyze(img, Options{Workers: 2, Engine: DWARF})
			got, calls := writtenSites(t, mod)
			addrs := make([]uint64, 0, len(got))
			for a := range got {
				addrs = append(addrs, a)
			}
			slices.Sort(addrs)
			want := symbolizedSites(t, sym, dbg, addrs)
			confirmed := make([]bool, len(calls))
			bad, frames, pulled := 0, 0, 0
			for _, a := range addrs {
				w := want[a]
				for _, g := range got[a] {
					frames += len(w)
					ok, n := matchSites(g, w)
					if ok {
						for _, c := range n {
							confirmed[g.calls[c]] = true
						}
						if len(n) < len(g.sites) {
							pulled++
						}
						continue
					}
					if bad++; bad <= 10 {
						t.Errorf("%#x: bloop writes call sites %v, llvm-symbolizer says %v", a, g.sites, w)
					}
				}
			}
			if bad > 10 {
				t.Errorf("... %d addresses differ in all", bad)
			}
			unconfirmed := 0
			for i, c := range confirmed {
				if !c {
					if unconfirmed++; unconfirmed <= 5 {
						t.Errorf("inlined call at %s: llvm-symbolizer reports it at none of its statements", calls[i])
					}
				}
			}
			if unconfirmed > 5 {
				t.Errorf("... %d of %d inlined calls in all", unconfirmed, len(calls))
			}
			t.Logf("%d inlined calls, %d statements, %d inlined frames checked; %d statements in a loop of another inline context", len(calls), len(addrs), frames, pulled)
		})
	}
}

// matchSites reports whether what bloop writes at an address agrees with
// llvm's inlined frames there, and which of the written call sites llvm
// confirms. Without loops they must be equal. hpcstruct's model places a
// loop in the context of its header, and the code of its body under the
// loop: a statement's calls below a loop are its own chain after the part
// it shares with the loop header's chain, which is itself written that way
// relative to the loop above. The header's chain is not known here, only
// that the statement's chain and it agree up to where the statement's
// calls below the loop begin; so each segment, innermost first, must be
// the end of what remains of the statement's chain, and what remains at
// the outermost segment must begin it.
func matchSites(g written, w []site) (bool, []int) {
	segs := make([][2]int, 0, len(g.cuts)+1) // [lo, hi) in g.sites
	lo := 0
	for _, c := range g.cuts {
		segs = append(segs, [2]int{lo, c})
		lo = c
	}
	segs = append(segs, [2]int{lo, len(g.sites)})
	return matchSegs(g.sites, segs, w, true)
}

// matchSegs matches chain r against the written segments: whole, when
// exact, else as a prefix of the chain the segments write. It returns the
// indexes in sites it matched.
func matchSegs(sites []site, segs [][2]int, r []site, exact bool) (bool, []int) {
	last := segs[len(segs)-1]
	seg := sites[last[0]:last[1]]
	if len(segs) == 1 {
		if len(r) > len(seg) || (exact && len(r) != len(seg)) || !sameSites(r, seg[:len(r)]) {
			return false, nil
		}
		return true, span(last[0], last[0]+len(r))
	}
	js := []int{len(seg)}
	if !exact {
		js = js[:0]
		for j := len(seg); j >= 0; j-- {
			js = append(js, j)
		}
	}
	for _, j := range js {
		if j > len(r) || !sameSites(r[len(r)-j:], seg[:j]) {
			continue
		}
		if ok, n := matchSegs(sites, segs[:len(segs)-1], r[:len(r)-j], false); ok {
			return true, append(n, span(last[0], last[0]+j)...)
		}
	}
	return false, nil
}

func span(lo, hi int) []int {
	var n []int
	for i := lo; i < hi; i++ {
		n = append(n, i)
	}
	return n
}

func sameSites(a, b []site) bool {
	for i := range a {
		if a[i].line != b[i].line || !sameFile(a[i].file, b[i].file) {
			return false
		}
	}
	return true
}

// sameFile compares absolute paths whole and relative ones by base name:
// for a unit compiled in a relative directory (Debian's libgsl: comp_dir
// "./bspline"), llvm joins the directory twice, once as DW_AT_comp_dir and
// once as DWARF 5's directory entry 0, which is that same directory.
func sameFile(a, b string) bool {
	if filepath.IsAbs(a) && filepath.IsAbs(b) {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return filepath.Base(a) == filepath.Base(b)
}

func TestMatchSites(t *testing.T) {
	a, b, c, d, x := site{"a.c", 1}, site{"a.c", 2}, site{"b.h", 3}, site{"c.h", 4}, site{"<unknown>", 0}
	for _, tc := range []struct {
		name  string
		w     written
		llvm  []site
		ok    bool
		match int // call sites confirmed
	}{
		{"equal", written{sites: []site{a, b}}, []site{a, b}, true, 2},
		{"none", written{}, nil, true, 0},
		{"unknown site", written{sites: []site{x}}, []site{a}, false, 0},
		{"wrong line", written{sites: []site{a, c}}, []site{a, d}, false, 0},
		{"extra call, no loop", written{sites: []site{a, b}}, []site{a}, false, 0},
		{"missing call", written{sites: []site{a}}, []site{a, b}, false, 0},
		// a loop headed in b's context holds the caller's code
		{"caller code in callee loop", written{sites: []site{a, b}, cuts: []int{2}}, []site{a}, true, 1},
		// a loop headed in a's context holds c's inlined code: a / L / c
		{"sibling code in loop", written{sites: []site{a, c}, cuts: []int{1}}, []site{c}, true, 1},
		{"sibling code, wrong below", written{sites: []site{a, c}, cuts: []int{1}}, []site{d}, false, 0},
		// loops in two contexts: a / b / L1 / c / L2 / d, the statement's chain a c d
		{"nested loops", written{sites: []site{a, b, c, d}, cuts: []int{2, 3}}, []site{a, c, d}, true, 3},
		{"nested loops, order", written{sites: []site{a, b, c, d}, cuts: []int{2, 3}}, []site{a, d, c}, false, 0},
	} {
		ok, n := matchSites(tc.w, tc.llvm)
		if ok != tc.ok || len(n) != tc.match {
			t.Errorf("%s: matchSites = %v, %v; want %v and %d confirmed", tc.name, ok, n, tc.ok, tc.match)
		}
	}
}
