package sample

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"bloop/internal/testenv"
	"bloop/loader"
	"bloop/perfevent"
)

// TestRecord samples a corpus program and checks the recording holds its
// samples, its mappings and its exit code.
func TestRecord(t *testing.T) {
	testenv.Capable(t, "perf_event_open", Available())
	bin, _ := filepath.Abs("../testdata/bin/hot-gcc12-O2")
	var buf, out bytes.Buffer
	st, err := Record(&buf, []string{bin, "100000000"}, Options{Freq: 2000, Stdout: &out, StackSize: 8192})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "result=") {
		t.Errorf("program output %q", out.String())
	}
	path := filepath.Join(t.TempDir(), "hot.rec")
	os.WriteFile(path, buf.Bytes(), 0o600)
	rec, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Samples) < 50 || uint64(len(rec.Samples)) != st.Samples || !rec.HasStats {
		t.Errorf("%d samples, stats %+v", len(rec.Samples), st)
	}
	var exe, libc bool
	for _, m := range rec.Mmaps {
		exe = exe || m.File == bin
		libc = libc || strings.Contains(m.File, "libc.so")
	}
	if !exe || !libc {
		t.Errorf("mappings lack the program (%v) or libc (%v): %+v", exe, libc, rec.Mmaps)
	}
	// The program's build-id note, as the file had it when it ran.
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	want := loader.BuildID(f)
	f.Close()
	n := 0
	for _, b := range rec.BuildIDs {
		if b.Path == bin {
			n++
			if !bytes.Equal(b.ID, want) {
				t.Errorf("build-id %x recorded for %s, its note says %x", b.ID, bin, want)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d build-ids recorded for %s, want 1: %+v", n, bin, rec.BuildIDs)
	}
	inStack := 0
	for _, s := range rec.Samples {
		if s.StackSize != 8192 || len(s.Stack) == 0 || s.SP == 0 {
			t.Fatalf("sample without stack: %+v", s)
		}
		if len(s.Stack) < int(s.StackSize) {
			inStack++ // the copy stops at the top of the stack
		}
	}
	t.Logf("%d samples in %.2fs, %d lost; %d stack copies reached the top of the stack", st.Samples, float64(st.DurationNanos)/1e9, st.Lost, inStack)
}

func TestRecordExitCode(t *testing.T) {
	testenv.Capable(t, "perf_event_open", Available())
	var buf bytes.Buffer
	st, err := Record(&buf, []string{"/bin/sh", "-c", "exit 3"}, Options{})
	if err != nil || st.ExitCode != 3 {
		t.Fatalf("exit code %d, err %v", st.ExitCode, err)
	}
	if _, err := Record(&buf, []string{"/nonexistent/program"}, Options{}); err == nil {
		t.Fatal("no error for a missing program")
	}
	if _, err := Record(&buf, []string{"/bin/true"}, Options{StackSize: 100}); err == nil {
		t.Fatal("no error for a bad stack size")
	}
}

// kernelSample builds a PERF_RECORD_SAMPLE body (after the header) as the
// kernel writes it for sampleType: a stack copy of size bytes of which
// dyn were filled.
func kernelSample(tid uint32, sp uint64, size, dyn int) []byte {
	le := binary.LittleEndian
	b := make([]byte, 32, 32+8*nUserRegs+8+size+8)
	le.PutUint64(b, 0x401000) // ip
	le.PutUint32(b[8:], 1)    // pid
	le.PutUint32(b[12:], tid) // tid
	le.PutUint64(b[16:], 1)   // time
	le.PutUint64(b[24:], 2)   // abi: 64-bit
	for range nUserRegs {
		b = le.AppendUint64(b, sp) // the user registers (SP for all will do)
	}
	b = le.AppendUint64(b, uint64(size))   // stack size
	b = append(b, make([]byte, size)...)   // stack
	return le.AppendUint64(b, uint64(dyn)) // dyn size
}

// TestConvertNoAllocs checks that converting a sample allocates nothing
// once the thread's first sample has been seen: at 1 kHz per thread the
// recorder must not make garbage per sample.
func TestConvertNoAllocs(t *testing.T) {
	var st Stats
	c := &converter{w: NewWriter(io.Discard), st: &st, stackSize: DefaultStack, dec: testDecoder(t, DefaultStack)}
	body := kernelSample(7, 0x7ffc0000, DefaultStack, 20000)
	stack := body[32+8*nUserRegs+8:]
	c.record(unix.PERF_RECORD_SAMPLE, 0, body)
	n := 0
	allocs := testing.AllocsPerRun(200, func() {
		n++
		stack[n%1000] = byte(n) // a change near SP, as between real samples
		c.record(unix.PERF_RECORD_SAMPLE, 0, body)
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per sample, want 0", allocs)
	}
	if st.Samples != uint64(n+1) {
		t.Errorf("%d samples counted, want %d", st.Samples, n+1)
	}
}

// testDecoder is the decoder Record uses for a stack copy of stack bytes.
func testDecoder(t testing.TB, stack int) *perfevent.Decoder {
	t.Helper()
	attr := eventAttr(events["cpu-clock"], 1000, stack, true)
	dec, err := newDecoder(&attr)
	if err != nil {
		t.Fatal(err)
	}
	return dec
}
