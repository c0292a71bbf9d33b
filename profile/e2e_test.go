package profile

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"bloop/internal/rectest"
	"bloop/internal/testenv"
)

var allProf = flag.Bool("prof.all", false, "run the unwind measurement on every testdata/prof binary at full length")

func onlyModule(bin string) func(string) bool {
	return func(p string) bool { return p == bin }
}

// TestAttribution records hot-gcc12-O2, whose time is in the loop of the
// static inline hot_loop inlined into main, and checks that the top-down
// view puts at least 90% of the samples under that loop inside that
// inlined frame, that every view gives each scope the same excl, and the
// pprof output read back by pprof's library and by go tool pprof -list.
func TestAttribution(t *testing.T) {
	bin, _ := filepath.Abs("../testdata/bin/hot-gcc12-O2")
	path := rectest.Record(t, bin)
	p, err := Build(path, Options{Analyze: onlyModule(bin)})
	if err != nil {
		t.Fatal(err)
	}
	share := hotLoopShare(p) // of Total: each sample of a recording counts 1
	t.Logf("%d samples, %.1f%% under the loop in the inlined hot_loop", p.Samples, 100*share)
	if p.Samples < 100 || share < 0.9 {
		t.Errorf("only %.1f%% of %d samples under hot_loop's loop", 100*share, p.Samples)
	}
	if p.Outcomes[Complete] != p.Samples {
		t.Errorf("%d of %d samples unwound", p.Outcomes[Complete], p.Samples)
	}
	checkExclConsistent(t, p)

	checkPprof(t, p, roundTrip(t, p), "main", "hot_loop", "loop at hot.c:7")
	checkPprofList(t, p, "hot_loop", "../testdata/src")
}

// checkPprofList runs go tool pprof -list on p's pprof output for the
// function fn and requires its per-line totals (cum) to be the flat line
// view's: each sample on its own line, none piled on a loop's header.
func checkPprofList(t *testing.T, p *Profile, fn, srcDir string) {
	t.Helper()
	testenv.Need(t, "go")
	pb := filepath.Join(t.TempDir(), "p.pb.gz")
	f, err := os.Create(pb)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WritePprof(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// The binaries' DWARF names sources /src/...; -list needs the text.
	out, err := exec.Command("go", "tool", "pprof", "-sample_index=samples", "-source_path", srcDir, "-trim_path", "/src",
		"-list", "^"+fn+"$", pb).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, out)
	}
	got := map[int]uint64{}
	row := regexp.MustCompile(`^\s+(\S+)\s+(\S+)\s+(\d+):`)
	for _, l := range strings.Split(string(out), "\n") {
		if m := row.FindStringSubmatch(l); m != nil && m[2] != "." {
			n, _ := strconv.ParseUint(m[2], 10, 64)
			line, _ := strconv.Atoi(m[3])
			got[line] = n
		}
	}
	want := map[int]uint64{}
	for _, fe := range p.Flat(true) {
		if fe.Elem.Kind == ElemStmt && fe.Proc == fn {
			want[fe.Elem.Line] += fe.Incl
		}
	}
	if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pprof -list %s: samples per line %v, flat line view %v\n%s", fn, got, want, out)
	}
}

// TestUnwindSuccess records the unwinder corpus (testdata/prof: recursion
// 1000 deep, qsort callbacks, libm exp, a .cold part, threads; -O2
// -fomit-frame-pointer) and requires 99.9% of the samples to unwind to
// the process or thread entry. The frame-pointer-only unwind of the same
// samples is logged beside it.
func TestUnwindSuccess(t *testing.T) {
	bins := []string{"unwind-gcc12-O2", "unwind-clang14-O2"}
	rounds := "300"
	if *allProf {
		bins = append(bins, "unwind-gcc12-O3", "unwind-clang14-O3")
		rounds = "1000"
	}
	for _, b := range bins {
		t.Run(b, func(t *testing.T) {
			bin, _ := filepath.Abs(filepath.Join("../testdata/prof/bin", b))
			path := rectest.Record(t, bin, rounds)
			p, err := Build(path, Options{Analyze: func(string) bool { return false }})
			if err != nil {
				t.Fatal(err)
			}
			ok := float64(p.Outcomes[Complete]) / float64(p.Samples)
			fp := float64(p.FPOutcomes[Complete]) / float64(p.Samples)
			t.Logf("%s: %d samples: recipes %.2f%% complete (%d truncated, %d failed), frame pointers only %.2f%%; reasons %v; unwinds read up to %d bytes above SP (copy size %d)",
				b, p.Samples, 100*ok, p.Outcomes[Truncated], p.Outcomes[Failed], 100*fp, p.Reasons, p.StackUse, p.Meta.StackSize)
			// The target is 99.9%; at a few hundred samples that allows
			// one. A lone sample with neither a recipe nor a return
			// address on the stack shows up about once in fifty runs on
			// a loaded machine (not yet explained; the reasons are printed).
			if bad := p.Samples - p.Outcomes[Complete]; p.Samples < 200 || bad > max(1, p.Samples/1000) {
				t.Errorf("%s: %.2f%% of %d samples unwound to an entry; reasons %v", b, 100*ok, p.Samples, p.Reasons)
			}
			if !coldOnPath(p) && strings.Contains(b, "gcc") {
				t.Errorf("%s: no sample unwound through scan's .cold part", b)
			}
			// Every frame of the recursion is found: descend(1000) .. descend(0).
			if d := maxRun(p.Root, "descend", 0); d != 1001 {
				t.Errorf("%s: deepest recursion has %d descend frames, want 1001", b, d)
			}
		})
	}
}

// TestUnwindDeep records deep-gcc12-O2 (recursion up to 599 frames,
// qsort callbacks, libm) with the default stack copy: every sample must
// unwind to the entry, through the deepest recursion.
func TestUnwindDeep(t *testing.T) {
	bin, _ := filepath.Abs("../testdata/prof/bin/deep-gcc12-O2")
	path := rectest.Record(t, bin, "1500")
	p, err := Build(path, Options{Analyze: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	d := maxRun(p.Root, "descend", 0)
	t.Logf("%d samples: %d complete, %d truncated, %d failed (reasons %v); deepest recursion %d frames; unwinds read up to %d bytes above SP (copy size %d)",
		p.Samples, p.Outcomes[Complete], p.Outcomes[Truncated], p.Outcomes[Failed], p.Reasons, d, p.StackUse, p.Meta.StackSize)
	// Same allowance as TestUnwindSuccess: one lone failure in a few hundred.
	if bad := p.Samples - p.Outcomes[Complete]; p.Samples < 200 || bad > max(1, p.Samples/1000) {
		t.Errorf("%d of %d samples unwound to an entry; reasons %v", p.Outcomes[Complete], p.Samples, p.Reasons)
	}
	// A sixth of the time is spent more than 500 frames deep.
	if d < 500 {
		t.Errorf("deepest recursion has %d descend frames, want at least 500", d)
	}
}

// maxRun is the longest chain of frames of procedure name on one path
// (statement nodes between them do not break it).
func maxRun(n *Node, name string, run int) int {
	if n.Elem != nil && n.Elem.Kind == ElemProc {
		if n.Elem.Name == name {
			run++
		} else {
			run = 0
		}
	} else if n.Elem != nil && n.Elem.Kind != ElemStmt {
		run = 0
	}
	best := run
	for _, c := range n.Children {
		best = max(best, maxRun(c, name, run))
	}
	return best
}

// coldOnPath reports whether some call path goes through a .cold part.
func coldOnPath(p *Profile) bool {
	found := false
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Elem != nil && strings.Contains(n.Elem.Name, ".cold") && len(n.Children) > 0 {
			found = true
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(p.Root)
	return found
}

// TestUnwindSignal records sig-gcc12-O2, which spends half of its time
// in a SIGPROF handler: the unwinder must go through the kernel's signal
// frame, so that the handler's samples sit under the trampoline (in libc)
// under the frame the signal interrupted (spin, in main), not under
// whatever a stack scan finds. Before signal frames were read, the scan
// put them under __libc_start_call_main, main missing.
func TestUnwindSignal(t *testing.T) {
	bin, _ := filepath.Abs("../testdata/prof/bin/sig-gcc12-O2")
	path := rectest.Record(t, bin, "40")
	p, err := Build(path, Options{Analyze: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d samples: %d complete, %d failed (reasons %v), %d frames without recipe",
		p.Samples, p.Outcomes[Complete], p.Outcomes[Failed], p.Reasons, p.FPSteps)
	if bad := p.Samples - p.Outcomes[Complete]; p.Samples < 200 || bad > max(1, p.Samples/1000) {
		t.Errorf("%d of %d samples unwound to an entry; reasons %v", p.Outcomes[Complete], p.Samples, p.Reasons)
	}
	// main > spin (interrupted) > trampoline in libc > spin (the handler's).
	// The signal may also interrupt main's loop itself or work before its
	// tail call to spin: the frame under the trampoline is then main or
	// work, still with main at the bottom.
	var handler, placed uint64
	var misplaced []string
	var walk func(n *Node)
	walk = func(n *Node) {
		if tramp := callerProc(n); isProc(n, "spin") && tramp != nil && tramp.Elem.Module == "libc.so.6" {
			handler += n.Incl
			c := callerProc(tramp)
			for isProc(c, "spin") || isProc(c, "work") {
				c = callerProc(c)
			}
			if isProc(c, "main") {
				placed += n.Incl
			} else {
				misplaced = append(misplaced, fmt.Sprintf("%d samples under %s", n.Incl, procPath(n)))
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(p.Root)
	// The handler's share varies with the machine's load (alarms that
	// come while one is pending are merged): a few percent at least.
	t.Logf("%d samples in the handler, %d of them under main > (spin|work) > trampoline", handler, placed)
	if handler < p.Samples/100 || placed != handler {
		t.Errorf("%d of %d samples in the handler, %d of them under main > (spin|work) > trampoline; want a twentieth or more, all of them; misplaced: %v", handler, p.Samples, placed, misplaced)
	}
}

// procPath names the procedures from the root down to n.
func procPath(n *Node) string {
	var names []string
	for ; n != nil; n = callerProc(n) {
		if n.Elem != nil && n.Elem.Kind == ElemProc {
			names = append([]string{n.Elem.Name}, names...)
		}
	}
	return strings.Join(names, " > ")
}

// callerProc is the nearest procedure node above n (statement, loop and
// inlined-call nodes are skipped), nil at the root.
func callerProc(n *Node) *Node {
	for n = n.Parent; n != nil; n = n.Parent {
		if n.Elem != nil && n.Elem.Kind == ElemProc {
			return n
		}
	}
	return nil
}

func isProc(n *Node, name string) bool {
	return n != nil && n.Elem != nil && n.Elem.Kind == ElemProc && n.Elem.Name == name
}

// TestUnwindThrow records throw-gcc12-O2 (C++ exceptions thrown 20 frames
// deep, caught in main.cold): every sample, those in the unwinder of
// libgcc and libstdc++ and in the catch handler included, must unwind to
// the entry. The catch handler's recipes were wrong when main was asked
// for before main.cold.
func TestUnwindThrow(t *testing.T) {
	bin, _ := filepath.Abs("../testdata/prof/bin/throw-gcc12-O2")
	path := rectest.Record(t, bin, "60000")
	p, err := Build(path, Options{Analyze: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d samples: %d complete, %d truncated, %d failed (reasons %v)",
		p.Samples, p.Outcomes[Complete], p.Outcomes[Truncated], p.Outcomes[Failed], p.Reasons)
	// Two allowed: libgcc's unwinder (_Unwind_RaiseException saves every
	// register and moves the stack) loses a rare sample on a loaded
	// machine; the catch handler's wrong recipes (main.cold asked for
	// after main) lost a sixth.
	if bad := p.Samples - p.Outcomes[Complete]; p.Samples < 200 || bad > max(2, p.Samples/500) {
		t.Errorf("%d of %d samples unwound to an entry; reasons %v", p.Outcomes[Complete], p.Samples, p.Reasons)
	}
}
