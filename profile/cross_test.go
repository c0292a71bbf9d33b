package profile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"bloop/internal/rectest"
	"bloop/loader"
	"bloop/sample"
)

// qsSample is one sample of testdata/prof/cross's dumps: the registers a
// SIGPROF handler read from its ucontext under qemu user-mode emulation,
// and the stack from SP up to __libc_stack_end.
type qsSample struct {
	pc, sp, fp, lr uint64
	stack          []byte
}

// readQS reads a dump (sampled.c writes it): "BLOOPQS1", the sample count
// and the length of /proc/self/maps (u64 each), the maps, then per sample
// pc, sp, fp, lr and the stack's length (u64 each) and the stack.
func readQS(path string) (maps string, out []qsSample, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	r := bufio.NewReader(z)
	var hdr struct {
		Magic  [8]byte
		N, Len uint64
	}
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil || string(hdr.Magic[:]) != "BLOOPQS1" || hdr.N > 1<<16 || hdr.Len > 1<<20 {
		return "", nil, fmt.Errorf("%s: not a sample dump (%v)", path, err)
	}
	m := make([]byte, hdr.Len)
	if _, err := io.ReadFull(r, m); err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	for i := uint64(0); i < hdr.N; i++ {
		var h [5]uint64
		if err := binary.Read(r, binary.LittleEndian, &h); err != nil || h[4] > 1<<20 {
			return "", nil, fmt.Errorf("%s: sample %d: %v", path, i, err)
		}
		s := qsSample{pc: h[0], sp: h[1], fp: h[2], lr: h[3], stack: make([]byte, h[4])}
		if _, err := io.ReadFull(r, s.stack); err != nil {
			return "", nil, fmt.Errorf("%s: sample %d: %w", path, i, err)
		}
		out = append(out, s)
	}
	return string(m), out, nil
}

// crossMap is an executable mapping of a dump, with the file's path on
// the recording machine and here.
type crossMap struct {
	addr, len, off uint64
	path, host     string
}

// crossMaps reads the executable file mappings of a dump's maps. qemu
// lists the guest's mappings with the host's paths: the program (prog)
// becomes exe, Debian's cross libraries (/usr/<triple>/lib/x, run with
// qemu -L) the machine's own (/usr/lib/<triple>/x).
func crossMaps(t testing.TB, maps, prog, exe string) []crossMap {
	var out []crossMap
	for _, l := range strings.Split(maps, "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || f[1] != "r-xp" || !strings.HasPrefix(f[5], "/") {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(f[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("bad map line %q", l)
		}
		m := crossMap{addr: a, len: b - a, off: off, path: f[5], host: f[5]}
		if filepath.Base(f[5]) == filepath.Base(prog) {
			m.path, m.host = exe, prog
		} else if rest, ok := strings.CutPrefix(f[5], "/usr/"); ok {
			if triple, lib, ok := strings.Cut(rest, "/lib/"); ok {
				m.path = "/usr/lib/" + triple + "/" + lib
			}
		}
		out = append(out, m)
	}
	return out
}

// crossRecording writes a bloop recording of the dump of program prog,
// as the recorder on an aarch64 or ppc64le machine writes one: the
// executable mappings (crossMaps) and each sample with its link register
// (kind 11). It returns the recording and the mappings.
func crossRecording(t testing.TB, prog, exe string) (string, []crossMap) {
	t.Helper()
	maps, qs, err := readQS(prog + ".qs.gz")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := sample.NewWriter(&buf)
	w.Meta(sample.Meta{Command: []string{exe}, Event: "cpu-clock", Freq: 500, StackSize: sample.DefaultStack})
	cm := crossMaps(t, maps, prog, exe)
	for _, m := range cm {
		w.Mmap(sample.Mmap{Pid: 1, Tid: 1, Addr: m.addr, Len: m.len, Pgoff: m.off, Prot: 5, File: m.path})
	}
	for i, s := range qs {
		w.Sample(&sample.Sample{Pid: 1, Tid: 1, Time: uint64(i + 1), IP: s.pc, SP: s.sp, BP: s.fp, LR: s.lr, HasLR: true,
			StackSize: sample.DefaultStack, Stack: s.stack})
	}
	w.Stats(sample.Stats{Samples: uint64(len(qs))})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cross.rec")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, cm
}

// crossPerfData writes the perf.data file perf record --call-graph dwarf
// would write of the dump of prog on its machine (perf's name arch): the
// same registers, in the order of that architecture's perf register
// numbers.
func crossPerfData(t *testing.T, prog, arch, exe string) string {
	t.Helper()
	maps, qs, err := readQS(prog + ".qs.gz")
	if err != nil {
		t.Fatal(err)
	}
	var mmaps []rectest.PerfMmap
	for _, m := range crossMaps(t, maps, prog, exe) {
		mmaps = append(mmaps, rectest.PerfMmap{Pid: 1, Addr: m.addr, Len: m.len, Pgoff: m.off, File: m.path})
	}
	var mask uint64
	var samples []rectest.PerfSample
	for i, s := range qs {
		var regs []uint64
		switch arch {
		case "aarch64": // x29, x30, sp, pc
			mask, regs = 1<<29|1<<30|1<<31|1<<32, []uint64{s.fp, s.lr, s.sp, s.pc}
		case "ppc64le": // r1, r31, nip, link
			mask, regs = 1<<1|1<<31|1<<32|1<<36, []uint64{s.sp, s.fp, s.pc, s.lr}
		}
		samples = append(samples, rectest.PerfSample{Pid: 1, Tid: 1, Time: uint64(i + 1), IP: s.pc, Regs: regs, Stack: s.stack, StackSize: 16384})
	}
	return rectest.PerfData(t, arch, mask, mmaps, samples)
}

// crossLibBuilds are the build-ids of Debian's cross libraries when the
// dumps of the dynamic programs were made: a later libc has its code
// elsewhere, and those tests skip.
var crossLibBuilds = map[string]string{
	"/usr/aarch64-linux-gnu/lib/libc.so.6":             "67adfea574cc9357d858bf79acc700c660126c81",
	"/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1": "e2f2d3774067d1825b5e8333acfd2cb469803f74",
	"/usr/powerpc64le-linux-gnu/lib/libc.so.6":         "f0685018a1eb2c1e222f7085aed201c472462d3b",
	"/usr/powerpc64le-linux-gnu/lib/ld64.so.2":         "25ac53644d07db97748edf62e5b6f3fa3f8f4126",
}

// TestReportCross reports recordings made on aarch64 and ppc64le from the
// file alone on this machine: testdata/prof/cross's program sampled
// itself under qemu user-mode emulation (perf_event_open there samples
// the emulator), and each dump becomes the recording an aarch64 or
// ppc64le machine would write, bloop's and perf's (--call-graph dwarf),
// its files at the machine's paths, found through --sysroot: the static
// program at /opt/cross/sampled, the dynamic one with Debian's libc
// (stripped: its procedures are mostly inferred) at /usr/lib/<triple>.
// Every sample must unwind by recipes to the process entry (_start),
// through leaf frames whose return address is still in the link
// register, qsort's callback and the recursion.
func TestReportCross(t *testing.T) {
	for _, c := range []struct{ prog, perfArch, format string }{
		{"sampled-arm64", "aarch64", "bloop"}, {"sampled-arm64", "aarch64", "perf"},
		{"sampled-ppc64le", "ppc64le", "bloop"}, {"sampled-ppc64le", "ppc64le", "perf"},
		{"sampled-dyn-arm64", "aarch64", "bloop"}, {"sampled-dyn-arm64", "aarch64", "perf"},
		{"sampled-dyn-ppc64le", "ppc64le", "bloop"}, {"sampled-dyn-ppc64le", "ppc64le", "perf"},
	} {
		t.Run(c.prog+"/"+c.format, func(t *testing.T) {
			prog, _ := filepath.Abs("../testdata/prof/cross/" + c.prog)
			rec, maps := crossRecording(t, prog, "/opt/cross/sampled")
			if c.format == "perf" {
				rec = crossPerfData(t, prog, c.perfArch, "/opt/cross/sampled")
			}
			sysroot := t.TempDir()
			for _, m := range maps {
				if want, ok := crossLibBuilds[m.host]; ok && !sameBuild(m.host, want) {
					t.Skipf("%s: not the build the dump was made with (%s)", m.host, want)
				}
				os.MkdirAll(filepath.Join(sysroot, filepath.Dir(m.path)), 0o755)
				if err := os.Symlink(m.host, filepath.Join(sysroot, m.path)); err != nil {
					t.Fatal(err)
				}
			}
			p, err := Build(rec, Options{Sysroot: sysroot})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d samples", p.Samples)
			if p.Samples < 32 || p.Outcomes[Complete] != p.Samples || p.FPSteps != 0 {
				t.Errorf("%d of %d samples unwound to the entry (%d frames without recipe): %v", p.Outcomes[Complete], p.Samples, p.FPSteps, p.Reasons)
			}
			// The outermost frame: _start on aarch64; on ppc64 _start jumps
			// to __libc_start_main, which begins the null back chain.
			root := "_start"
			if c.perfArch == "ppc64le" {
				root = "__libc_start_main"
			}
			top := ViewTree(p.Root, false)
			if kids := top.Sorted(); len(kids) == 0 || !strings.HasPrefix(kids[0].Label, root) {
				t.Errorf("the call paths do not begin at %s", root)
			}
			out := shownLabels(p, top)
			t.Logf("the top-down view's scopes of 1%% and more:\n%s", out)
			for _, fn := range []string{" main ", " descend", " work", " leaf", " cmp "} {
				if !strings.Contains(out, fn) {
					t.Errorf("no %s in the top-down view", fn)
				}
			}
		})
	}
}

// shownLabels lists, a line each with a space before, the labels of the
// nodes of tree that the top-down view shows at 1% (report.TopDown,
// which profile's tests cannot import).
func shownLabels(p *Profile, tree *Node) string {
	var b strings.Builder
	var walk func(n *Node)
	walk = func(n *Node) {
		if float64(n.Incl)*100/float64(max(p.Total, 1)) < 1 {
			return
		}
		b.WriteString(" " + n.Label)
		if n.Elem != nil {
			b.WriteString(ModuleSuffix(n.Elem))
		}
		b.WriteString("\n")
		for _, c := range n.Sorted() {
			walk(c)
		}
	}
	walk(tree)
	return b.String()
}

// sameBuild reports whether the file at path has build-id want.
func sameBuild(path, want string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return fmt.Sprintf("%x", loader.BuildID(f)) == want
}
