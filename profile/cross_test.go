package profile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"bloop/internal/rectest"
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

// crossRecording writes a bloop recording of a dump, as the recorder on
// an aarch64 or ppc64le machine writes one: the program's executable
// mappings (from the dump's maps, under the recording machine's path
// exe) and each sample with its link register (kind 11).
func crossRecording(t testing.TB, dump, exe string) string {
	t.Helper()
	maps, qs, err := readQS(dump)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := sample.NewWriter(&buf)
	w.Meta(sample.Meta{Command: []string{exe}, Event: "cpu-clock", Freq: 500, StackSize: sample.DefaultStack})
	for _, l := range strings.Split(maps, "\n") {
		f := strings.Fields(l)
		// The program's code: qemu lists the guest's mappings, with the
		// host's path of the file.
		if len(f) < 6 || f[1] != "r-xp" || filepath.Base(f[5]) != filepath.Base(dump[:len(dump)-len(".qs.gz")]) {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(f[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s: bad map line %q", dump, l)
		}
		w.Mmap(sample.Mmap{Pid: 1, Tid: 1, Addr: a, Len: b - a, Pgoff: off, Prot: 5, File: exe})
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
	return path
}

// crossPerfData writes the perf.data file perf record --call-graph dwarf
// would write of a dump on its machine (perf's name arch): the same
// registers, in the order of that architecture's perf register numbers.
func crossPerfData(t *testing.T, dump, arch, exe string) string {
	t.Helper()
	maps, qs, err := readQS(dump)
	if err != nil {
		t.Fatal(err)
	}
	var mmaps []rectest.PerfMmap
	for _, l := range strings.Split(maps, "\n") {
		f := strings.Fields(l)
		if len(f) < 6 || f[1] != "r-xp" || filepath.Base(f[5]) != filepath.Base(dump[:len(dump)-len(".qs.gz")]) {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		a, _ := strconv.ParseUint(lo, 16, 64)
		b, _ := strconv.ParseUint(hi, 16, 64)
		off, _ := strconv.ParseUint(f[2], 16, 64)
		mmaps = append(mmaps, rectest.PerfMmap{Pid: 1, Addr: a, Len: b - a, Pgoff: off, File: exe})
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

// TestReportCross reports recordings made on aarch64 and ppc64le from the
// file alone on this machine: testdata/prof/cross's program sampled
// itself under qemu user-mode emulation (perf_event_open there samples
// the emulator), and each dump becomes the recording an aarch64 or
// ppc64le machine would write, bloop's and perf's (--call-graph dwarf),
// its executable at /opt/cross/sampled, found through --sysroot. Every
// sample must unwind by recipes to the process entry (_start), through
// leaf frames whose return address is still in the link register, qsort's
// callback and the recursion.
func TestReportCross(t *testing.T) {
	for _, c := range []struct{ arch, perfArch, format string }{
		{"arm64", "aarch64", "bloop"}, {"arm64", "aarch64", "perf"},
		{"ppc64le", "ppc64le", "bloop"}, {"ppc64le", "ppc64le", "perf"},
	} {
		t.Run(c.arch+"/"+c.format, func(t *testing.T) {
			bin, _ := filepath.Abs("../testdata/prof/cross/sampled-" + c.arch)
			rec := crossRecording(t, bin+".qs.gz", "/opt/cross/sampled")
			if c.format == "perf" {
				rec = crossPerfData(t, bin+".qs.gz", c.perfArch, "/opt/cross/sampled")
			}
			sysroot := t.TempDir()
			os.MkdirAll(filepath.Join(sysroot, "opt/cross"), 0o755)
			if err := os.Symlink(bin, filepath.Join(sysroot, "opt/cross/sampled")); err != nil {
				t.Fatal(err)
			}
			p, err := Build(rec, Options{Sysroot: sysroot})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			p.WriteTopDown(&out, ViewOptions{MinPercent: 1}, false)
			t.Logf("%d samples\n%s", p.Samples, out.String())
			if p.Samples < 32 || p.Outcomes[Complete] != p.Samples || p.FPSteps != 0 {
				t.Errorf("%d of %d samples unwound to the entry (%d frames without recipe): %v", p.Outcomes[Complete], p.Samples, p.FPSteps, p.Reasons)
			}
			for _, fn := range []string{"_start", "main", "descend", "work", "leaf"} {
				if !strings.Contains(out.String(), fn) {
					t.Errorf("no %s in the top-down view", fn)
				}
			}
		})
	}
}
