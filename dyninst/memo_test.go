package dyninst

import (
	"bytes"
	"debug/elf"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"bloop/cfg"
	"bloop/loader"
	"bloop/procs"
)

// TestParseMemoSameAsFresh: procedure discovery reusing the parses of
// earlier rounds finds what parsing every round afresh finds (procedures,
// return statuses, run-ons), every parse it reuses is the one a fresh
// build gives, and the call targets it hands on to Run are those a fresh
// sweep of the table's procedures finds, on the corpus of three instruction sets, the
// hand-built image and stripped system libraries, whose later rounds
// reuse most parses.
func TestParseMemoSameAsFresh(t *testing.T) {
	var bins []string
	for _, dir := range []string{"bin", "bin-arm64", "bin-ppc64le"} {
		m, _ := filepath.Glob(filepath.Join("..", "testdata", dir, "*"))
		for _, p := range m {
			if filepath.Base(p) != "SHA256SUMS" {
				bins = append(bins, p)
			}
		}
	}
	if len(bins) == 0 {
		t.Fatal("no corpus binaries")
	}
	// Stripped libraries take several rounds: their procedures are found
	// by the calls of the ones found before.
	rounds := map[string]bool{}
	for _, p := range []string{"/usr/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libexpat.so.1", "/usr/lib/x86_64-linux-gnu/libzstd.so.1"} {
		if _, err := os.Stat(p); err == nil {
			bins = append(bins, p)
			rounds[p] = true
		}
	}
	check := func(t *testing.T, img *loader.Image) *parseMemo {
		memo := newParseMemo()
		memo.verify = true
		tab := Hpcstruct.discover(img, 2, memo)
		got := tableString(tab)
		want := tableString(Hpcstruct.discover(img, 2, nil))
		if got != want {
			t.Errorf("with the memo:\n%s\nafresh:\n%s", got, want)
		}
		// Run's image is the table's: its sweep, done afresh, finds the
		// call targets discovery hands on.
		fresh := (&callTargets{img: procs.WithProcs(img, tab, nil)}).targets()
		if !maps.Equal(tab.CallTargets, fresh) {
			t.Errorf("call targets handed on %x, a fresh sweep finds %x",
				slices.Sorted(maps.Keys(tab.CallTargets)), slices.Sorted(maps.Keys(fresh)))
		}
		if n := memo.stale.Load(); n > 0 {
			t.Errorf("%d reused parses differ from a fresh build", n)
		}
		return memo
	}
	// A jump into code no symbol covers runs on there until a later round
	// finds a call to it: then it is a tail call to that procedure, and
	// the jumping procedure's parse no longer runs on.
	if memo := check(t, runOnImage()); memo.reused.Load() == 0 {
		t.Error("run-on image: h's parse not reused in the second round")
	}
	// A procedure found in one round runs straight into one the next
	// round finds: its extent shrinks, and its parse runs on past it.
	if memo := check(t, shrinkImage()); memo.reused.Load() == 0 {
		t.Error("shrink image: f's parse not reused")
	}
	for _, program := range []bool{false, true} {
		img := dyninstImage()
		img.DyninstProgram, img.Entry = program, 0x1050
		if memo := check(t, img); memo.reused.Load() == 0 {
			t.Errorf("program %v: f's parse not reused in the second round", program)
		}
	}
	for _, p := range bins {
		t.Run(filepath.Base(p), func(t *testing.T) {
			img, err := loader.Open(p, loader.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if memo := check(t, img); rounds[p] && memo.reused.Load() == 0 {
				t.Errorf("%s: no parse reused across rounds", p)
			}
		})
	}
}

// tableString is everything discovery decides, in a stable order.
func tableString(t *procs.Table) string {
	s := ""
	for _, p := range t.Procs {
		s += fmt.Sprintf("[%x,%x) %s %s\n", p.Lo, p.Hi, p.Source, p.Name())
	}
	for _, set := range []map[uint64]bool{t.NoReturn, t.RunsOn} {
		s += fmt.Sprintf("%x\n", slices.Sorted(maps.Keys(set)))
	}
	return s
}

// answers is a cfg.Oracle of functions for the tests.
type answers struct {
	called        func(uint64) bool
	region        func(uint64, bool) (uint64, uint64, bool)
	foreign, into func(uint64) (uint64, uint64, bool)
}

func (a answers) Called(t uint64) bool                                  { return a.called(t) }
func (a answers) Region(t uint64, callNext bool) (uint64, uint64, bool) { return a.region(t, callNext) }
func (a answers) Foreign(t uint64) (uint64, uint64, bool)               { return a.foreign(t) }
func (a answers) JumpInto(t uint64) (uint64, uint64, bool)              { return a.into(t) }

// TestQueryLogSame: a parse is reused only when every question its build
// asked gets the answer it got; any other answer, no oracle or no log at
// all makes it rebuild.
func TestQueryLogSame(t *testing.T) {
	log := &queryLog{
		called:  []boolQuery{{0x10, true}, {0x20, false}},
		regions: []regionQuery{{0x30, true, extentQuery{0x30, 0x30, 0x40, true}}},
		foreign: []extentQuery{{0x50, 0x48, 0x60, true}},
		into:    []extentQuery{{0x70, 0, 0, false}},
	}
	fresh := func() *answers {
		return &answers{
			called: func(t uint64) bool { return t == 0x10 },
			region: func(t uint64, callNext bool) (uint64, uint64, bool) {
				return t, 0x40, callNext
			},
			foreign: func(uint64) (uint64, uint64, bool) { return 0x48, 0x60, true },
			into:    func(uint64) (uint64, uint64, bool) { return 0, 0, false },
		}
	}
	for _, c := range []struct {
		name   string
		change func(*answers) cfg.Oracle
		log    *queryLog
		want   bool
	}{
		{"same answers", func(a *answers) cfg.Oracle { return *a }, log, true},
		{"a new call target", func(a *answers) cfg.Oracle { a.called = func(uint64) bool { return true }; return *a }, log, false},
		{"code runs on elsewhere", func(a *answers) cfg.Oracle {
			a.region = func(t uint64, _ bool) (uint64, uint64, bool) { return t, 0x38, true }
			return *a
		}, log, false},
		{"a table enters another procedure", func(a *answers) cfg.Oracle {
			a.foreign = func(uint64) (uint64, uint64, bool) { return 0x50, 0x60, true }
			return *a
		}, log, false},
		{"a jump lands in a procedure", func(a *answers) cfg.Oracle {
			a.into = func(uint64) (uint64, uint64, bool) { return 0x68, 0x80, true }
			return *a
		}, log, false},
		{"no oracle", func(*answers) cfg.Oracle { return nil }, log, false},
		{"no log", func(a *answers) cfg.Oracle { return *a }, nil, false},
		{"an empty log, no oracle", func(*answers) cfg.Oracle { return nil }, &queryLog{}, true},
	} {
		if got := c.log.same(c.change(fresh())); got != c.want {
			t.Errorf("%s: same = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestQueryLogWrap: the wrapped oracle answers as the original and
// records each question once per asking; the other options stay.
func TestQueryLogWrap(t *testing.T) {
	var l queryLog
	opt := l.wrap(cfg.Options{Procs: answers{
		called:  func(t uint64) bool { return t > 5 },
		region:  func(t uint64, next bool) (uint64, uint64, bool) { return t, t + 1, next },
		foreign: func(t uint64) (uint64, uint64, bool) { return t - 1, t + 1, true },
		into:    func(t uint64) (uint64, uint64, bool) { return 0, 0, false },
	}})
	if opt.NoReturn != nil || opt.LandingPad != nil || opt.Dyninst != nil {
		t.Error("wrap made options the options did not have")
	}
	o := opt.Procs
	o.Called(3)
	o.Called(9)
	o.Region(7, true)
	o.Foreign(4)
	o.JumpInto(2)
	want := queryLog{
		called:  []boolQuery{{3, false}, {9, true}},
		regions: []regionQuery{{7, true, extentQuery{7, 7, 8, true}}},
		foreign: []extentQuery{{4, 3, 5, true}},
		into:    []extentQuery{{2, 0, 0, false}},
	}
	if got := fmt.Sprint(l); got != fmt.Sprint(want) {
		t.Errorf("log %s, want %s", got, fmt.Sprint(want))
	}
}

// runOnImage is a .text at 0x1000: f jumps to 0x1020, which no symbol
// covers; h, at 0x1010, calls it.
func runOnImage() *loader.Image {
	text := []byte{0xe9, 0x1b, 0, 0, 0} // 1000 jmp 1020
	text = append(text, bytes.Repeat([]byte{0xcc}, 11)...)
	text = append(text, 0xe8, 0x0b, 0, 0, 0, 0xc3) // 1010 call 1020; ret
	text = append(text, bytes.Repeat([]byte{0xcc}, 10)...)
	text = append(text, 0xc3) // 1020 ret
	f := &loader.Func{Name: "f", Aliases: []string{"f"}, Addr: 0x1000, End: 0x1005, Sized: true}
	h := &loader.Func{Name: "h", Aliases: []string{"h"}, Addr: 0x1010, End: 0x1016, Sized: true}
	return &loader.Image{Name: "lib.so", Arch: loader.AMD64, Machine: elf.EM_X86_64,
		Sections: []*loader.Section{{Name: ".text", Addr: 0x1000, Data: text}},
		Funcs:    []*loader.Func{f, h}, Lines: &loader.LineTable{}}
}

// shrinkImage is a .text at 0x1000: f calls 0x1020, which no symbol
// covers; the code there calls 0x1030 and then runs into it through nops.
func shrinkImage() *loader.Image {
	text := []byte{0xe8, 0x1b, 0, 0, 0, 0xc3} // 1000 call 1020; ret
	text = append(text, bytes.Repeat([]byte{0xcc}, 26)...)
	text = append(text, 0xe8, 0x0b, 0, 0, 0) // 1020 call 1030
	text = append(text, bytes.Repeat([]byte{0x90}, 11)...)
	text = append(text, 0xc3) // 1030 ret
	f := &loader.Func{Name: "f", Aliases: []string{"f"}, Addr: 0x1000, End: 0x1006, Sized: true}
	return &loader.Image{Name: "lib.so", Arch: loader.AMD64, Machine: elf.EM_X86_64,
		Sections: []*loader.Section{{Name: ".text", Addr: 0x1000, Data: text}},
		Funcs:    []*loader.Func{f}, Lines: &loader.LineTable{}}
}

// TestMemoCoversOptions: a reused parse is the one its options would
// build only if every option that can change between rounds is logged or
// compared. The procedure table's answers are logged (loggedOracle names
// each method of cfg.Oracle); the rest are accounted for here, so a field
// added to cfg.Options fails this test until the memo accounts for it.
func TestMemoCoversOptions(t *testing.T) {
	how := map[string]string{
		"Arch":       "not set by a Parse",
		"NoReturn":   "the named set, compared round to round (parseMemo.begin)",
		"Procs":      "every question logged (loggedOracle)",
		"Roots":      "not set by a Parse",
		"LandingPad": "the image's call-site tables, which every round's image shares",
		"Dyninst":    "the policy's, the same every round",
	}
	typ := reflect.TypeOf(cfg.Options{})
	for i := range typ.NumField() {
		if name := typ.Field(i).Name; how[name] == "" {
			t.Errorf("cfg.Options.%s: the parse memo neither logs nor compares it", name)
		}
	}
}
