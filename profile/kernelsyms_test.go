package profile

import (
	"bloop/internal/testenv"
	"bloop/sample"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestKernelSymbolsOfTheRecording: a perf.data file's kernel frames are
// named from the copy of kallsyms perf record kept in its build-id
// cache, even where /proc/kallsyms cannot be read and the running kernel
// is another; a table of another boot (KASLR: every address moved, which
// one moved by 2 MiB stands for) is passed over for one of the
// recording's boot, else moved back to it, with a warning; one that
// cannot be moved is refused.
func TestKernelSymbolsOfTheRecording(t *testing.T) {
	testenv.Need(t, "perf")
	testenv.Capable(t, "perf_event_open", sample.Available())
	bid, data := t.TempDir(), filepath.Join(t.TempDir(), "perf.data")
	rec := exec.Command("perf", "--buildid-dir", bid, "record", "-q", "-o", data, "-e", "cpu-clock", "-g", "-F", "999",
		"--", "dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=1500000")
	if b, err := rec.CombinedOutput(); err != nil {
		testenv.Capable(t, fmt.Sprintf("perf record (%s)", b), err)
	}
	copies, _ := filepath.Glob(filepath.Join(bid, "[[]kernel.kallsyms]", "*", "kallsyms"))
	if len(copies) != 1 {
		t.Fatalf("perf record kept %d copies of kallsyms in %s, want 1", len(copies), bid)
	}
	real, err := os.ReadFile(copies[0])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	moved, unmovable := moveKallsyms(t, real, 2<<20), []byte{}
	for _, line := range strings.SplitAfter(string(moved), "\n") {
		if !strings.HasSuffix(strings.TrimSpace(line), " _etext") {
			unmovable = append(unmovable, line...)
		}
	}
	files := map[string][]byte{"moved": moved, "osrelease": []byte("0.0.0-another\n")}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setCopy := func(b []byte) {
		t.Helper()
		if err := os.WriteFile(copies[0], b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	saved := [2]string{kallsymsFile, releaseFile}
	defer func() { kallsymsFile, releaseFile = saved[0], saved[1] }()
	type result struct {
		names    []string
		err      error
		warnings []string
	}
	report := func(t *testing.T) result {
		t.Helper()
		p, err := Build(data, Options{Jobs: 2, Analyze: func(string) bool { return false }})
		if err != nil {
			t.Fatal(err)
		}
		var r result
		for _, m := range p.Modules {
			if m.Name == "[kernel]" {
				r.err = m.Err
			}
		}
		for _, w := range p.Warnings {
			if strings.Contains(w, "kernel symbols") {
				r.warnings = append(r.warnings, w)
			}
		}
		var walk func(n *Node)
		walk = func(n *Node) {
			if e := n.Elem; e != nil && e.Kind == ElemProc && e.Module == "[kernel]" {
				r.names = append(r.names, e.Name)
			}
			for _, c := range n.Children {
				walk(c)
			}
		}
		walk(p.Root)
		slices.Sort(r.names)
		r.names = slices.Compact(r.names)
		return r
	}
	named := func(names []string) int {
		n := 0
		for _, s := range names {
			if !strings.HasPrefix(s, "[kernel]@") {
				n++
			}
		}
		return n
	}

	// The copy, /proc/kallsyms of the same boot.
	want := report(t)
	if want.err != nil || named(want.names) == 0 || want.warnings != nil {
		t.Fatalf("no kernel frame named (%d procedures: %.5q; %v %q)", len(want.names), want.names, want.err, want.warnings)
	}
	for _, tc := range []struct {
		name            string
		copy            []byte // nil: none (perf's cache elsewhere)
		kallsyms, osrel string // "": the machine's
		moved           bool   // the names as want's, with a warning
		refused         string // else none named, the [kernel] error says this
	}{
		{name: "copy alone", copy: real, kallsyms: "absent", osrel: "osrelease"},
		{name: "proc alone", kallsyms: ""},
		{name: "copy of another boot, proc of this", copy: moved},
		{name: "proc of another boot", kallsyms: "moved", moved: true},
		{name: "copy of another boot alone", copy: moved, kallsyms: "absent", osrel: "osrelease", moved: true},
		{name: "copy of another boot without _etext, proc of another kernel", copy: unmovable, osrel: "osrelease", refused: "no _etext"},
		{name: "proc of another kernel", osrel: "osrelease", refused: "0.0.0-another"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PERF_BUILDID_DIR", filepath.Join(dir, "none"))
			if tc.copy != nil {
				t.Setenv("PERF_BUILDID_DIR", bid)
				setCopy(tc.copy)
			}
			kallsymsFile, releaseFile = saved[0], saved[1]
			if tc.kallsyms != "" {
				kallsymsFile = filepath.Join(dir, tc.kallsyms)
			}
			if tc.osrel != "" {
				releaseFile = filepath.Join(dir, tc.osrel)
			}
			got := report(t)
			switch {
			case tc.refused != "":
				if got.err == nil || !strings.Contains(got.err.Error(), tc.refused) || named(got.names) != 0 {
					t.Errorf("%d named (of %d), error %v; want none named and an error saying %q", named(got.names), len(got.names), got.err, tc.refused)
				}
			case got.err != nil || !slices.Equal(got.names, want.names) || (got.warnings != nil) != tc.moved:
				t.Errorf("%d names, %d named, error %v, warnings %q; want the %d names of both, warned %v",
					len(got.names), named(got.names), got.err, got.warnings, len(want.names), tc.moved)
			}
		})
	}
}

// moveKallsyms is a kallsyms text with every address by off higher.
func moveKallsyms(t *testing.T, b []byte, off uint64) []byte {
	t.Helper()
	var out strings.Builder
	for _, line := range strings.SplitAfter(string(b), "\n") {
		addr, rest, ok := strings.Cut(line, " ")
		a, err := strconv.ParseUint(addr, 16, 64)
		if !ok || err != nil || a == 0 {
			out.WriteString(line)
			continue
		}
		fmt.Fprintf(&out, "%016x %s", a+off, rest)
	}
	return []byte(out.String())
}

// TestKernelTextRelocate: a table of another boot moves its kernel text,
// _text to _etext and aliases with it, by one offset; its modules'
// symbols and what lies past _etext are left out, and an address there
// finds no symbol.
func TestKernelTextRelocate(t *testing.T) {
	ks := parseKallsyms([]byte("ffffffff81000000 T _stext\nffffffff81000000 T _text\nffffffff81000100 t do_one\n" +
		"ffffffff82000000 T _etext\nffffffff83000000 T _sinittext\nffffffffc0201000 t mod_fn\t[somemod]\n"))
	const delta = 0x1e00000
	k := kernelText{"_text", 0xffffffff81000000 + delta}
	if k.fits(ks) || !(kernelText{"_text", 0xffffffff81000000}).fits(ks) || !(kernelText{}).fits(ks) || !(kernelText{"_nope", 1}).fits(ks) {
		t.Error("fits: another boot taken, or this boot, an unknown one or an absent symbol refused")
	}
	moved, ok := k.relocate(ks)
	if !ok {
		t.Fatal("not moved")
	}
	for _, tc := range []struct {
		addr uint64
		name string
	}{
		{0xffffffff81000000 + delta, "_stext"},
		{0xffffffff81000180 + delta, "do_one"},
		{0xffffffff81ffffff + delta, "do_one"},
		{0xffffffff82000000 + delta, ""},
		{0xffffffff83000010 + delta, ""},
		{0xffffffffc0201000, ""},
		{0xffffffff81000100, ""}, // where the other boot had do_one
	} {
		if name, _, _ := moved.lookup(tc.addr); name != tc.name {
			t.Errorf("lookup(%#x) = %q, want %q", tc.addr, name, tc.name)
		}
	}
	if a, ok := moved.addrOf("_text"); !ok || a != k.addr {
		t.Errorf("the alias _text at %#x (%v), want %#x", a, ok, k.addr)
	}
	if _, ok := (kernelText{"_text", 1}).relocate(parseKallsyms([]byte("ffffffff81000000 T _text\n"))); ok {
		t.Error("moved without _etext")
	}
}
