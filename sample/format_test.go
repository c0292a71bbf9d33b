package sample

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func writeAll(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Meta(Meta{Command: []string{"prog", "arg"}, Event: "cpu-clock", Freq: 1000, StackSize: 4096, StartNanos: 42})
	w.Mmap(Mmap{Pid: 1, Tid: 1, Time: 5, Addr: 0x1000, Len: 0x2000, Pgoff: 0x1000, Prot: 5, File: "/bin/prog"})
	w.Comm(Comm{Pid: 1, Tid: 2, Time: 6, Name: "worker"})
	w.Task(KindFork, Task{Pid: 1, Ppid: 1, Tid: 2, Ptid: 1, Time: 6})
	w.Sample(&Sample{Pid: 1, Tid: 2, Time: 7, IP: 0x1234, SP: 0x7f00, BP: 9, DI: 0x5eed, HasDI: true, StackSize: 4096, Stack: []byte{1, 2, 3}})
	w.Lost(3)
	w.Task(KindExit, Task{Pid: 1, Ppid: 1, Tid: 2, Ptid: 1, Time: 8})
	w.Blob(Blob{Name: "[vdso]", Data: []byte("ELF")})
	w.Stats(Stats{Samples: 1, Lost: 3, FullStacks: 1, Throttles: 2, DurationNanos: 99, ExitCode: -1, Signal: 11, SignalName: "SIGSEGV", CoreDumped: true})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.rec")
	os.WriteFile(path, writeAll(t), 0o600)
	rec, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := &Recording{
		Meta:     Meta{Command: []string{"prog", "arg"}, Event: "cpu-clock", Freq: 1000, StackSize: 4096, StartNanos: 42},
		Mmaps:    []Mmap{{Pid: 1, Tid: 1, Time: 5, Addr: 0x1000, Len: 0x2000, Pgoff: 0x1000, Prot: 5, File: "/bin/prog"}},
		Comms:    []Comm{{Pid: 1, Tid: 2, Time: 6, Name: "worker"}},
		Forks:    []Task{{Pid: 1, Ppid: 1, Tid: 2, Ptid: 1, Time: 6}},
		Exits:    []Task{{Pid: 1, Ppid: 1, Tid: 2, Ptid: 1, Time: 8}},
		Samples:  []Sample{{Pid: 1, Tid: 2, Time: 7, IP: 0x1234, SP: 0x7f00, BP: 9, DI: 0x5eed, HasDI: true, StackSize: 4096, Stack: []byte{1, 2, 3}}},
		Lost:     3,
		Stats:    Stats{Samples: 1, Lost: 3, FullStacks: 1, Throttles: 2, DurationNanos: 99, ExitCode: -1, Signal: 11, SignalName: "SIGSEGV", CoreDumped: true},
		HasStats: true,
		Blobs:    []Blob{{Name: "[vdso]", Data: []byte("ELF")}},
	}
	if !reflect.DeepEqual(rec, want) {
		t.Errorf("got  %+v\nwant %+v", rec, want)
	}
}

// TestBadInput checks that damaged files give errors naming the file, not
// panics.
func TestBadInput(t *testing.T) {
	good := writeAll(t)
	future := append([]byte(Magic), 9, 0, 0, 0)
	unknownKind := append(append([]byte(nil), good...), 200, 1, 0, 0, 0, 7)
	tests := []struct {
		name string
		data []byte
		want string // substring of the error; "" for success
	}{
		{"empty", nil, "bad header"},
		{"not a recording", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00"), "bad header"},
		{"future version", future, "version 9"},
		{"truncated record", good[:len(good)-3], "truncated record"},
		{"truncated header", good[:14], "truncated record header"},
		{"huge record", append(append([]byte(nil), good[:12]...), 6, 0xff, 0xff, 0xff, 0xff), "record of"},
		{"short payload", append(append([]byte(nil), good[:12]...), KindSample, 4, 0, 0, 0, 1, 2, 3, 4), "short record"},
		{"unknown kind skipped", unknownKind, ""},
		{"shared stack top wraps", wrapShared(t), "shares stack"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.rec")
			os.WriteFile(path, tc.data, 0o600)
			_, err := ReadFile(path)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %v, want one naming %s and saying %q", err, path, tc.want)
			}
		})
	}
}

func TestScanStops(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := Scan(bytes.NewReader(writeAll(t)), func(Entry) error { n++; return stop })
	if err != stop || n != 1 {
		t.Fatalf("Scan = %v after %d records", err, n)
	}
}

// FuzzScan: any bytes give records or an error saying the file is not a
// recording, is corrupt or is of another version; never a panic, and
// never more memory than the input holds. The skim passes what Scan
// does but the samples, up to where Scan fails if it does (past it, a
// sample Scan refuses is no error to the skim). Seeds are whole
// recordings, with stack copies shared between samples.
func FuzzScan(f *testing.F) {
	f.Add([]byte{})
	f.Add(writeAll(f))
	f.Add(sharedStacks(f))
	f.Fuzz(func(t *testing.T, b []byte) {
		var full []string
		err := Scan(bytes.NewReader(b), func(v Entry) error {
			if s, ok := v.(*Sample); ok {
				if uint64(len(s.Stack)) > uint64(len(b))*uint64(len(b)+1) {
					t.Fatalf("a stack of %d bytes from %d bytes of input", len(s.Stack), len(b))
				}
				return nil
			}
			full = append(full, fmt.Sprintf("%T %+v", v, v))
			return nil
		})
		checkScanErr(t, err)
		var skim []string
		skimErr := scan(bufio.NewReader(bytes.NewReader(b)), true, func(v Entry) error {
			skim = append(skim, fmt.Sprintf("%T %+v", v, v))
			return nil
		})
		checkScanErr(t, skimErr)
		if len(skim) < len(full) || !slices.Equal(skim[:len(full)], full) || err == nil && (skimErr != nil || len(skim) != len(full)) {
			t.Fatalf("skim: %d entries (%v), Scan: %d (%v)", len(skim), skimErr, len(full), err)
		}
	})
}

// checkScanErr fails unless err is nil, ErrFormat or a version's.
func checkScanErr(t *testing.T, err error) {
	if err != nil && !errors.Is(err, ErrFormat) && !strings.Contains(err.Error(), "recording format version") {
		t.Fatalf("error %v is neither ErrFormat nor a version", err)
	}
}

// wrapShared is a recording whose second sample claims a shared stack
// top past 2^64: its stack pointer plus the shared length wraps around.
func wrapShared(t testing.TB) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Sample(&Sample{Pid: 1, Tid: 1, SP: 0x1000, StackSize: 128, Stack: make([]byte, 128)})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	// The record by hand: the writer never makes one.
	var p []byte
	for _, v := range []uint64{1 | 1<<32, 0, 0, ^uint64(0x0f), 0, 0} { // pid, tid; time; ip; sp; bp; di
		p = binary.LittleEndian.AppendUint64(p, v)
	}
	p = binary.LittleEndian.AppendUint32(p, 128)  // stack size
	p = binary.LittleEndian.AppendUint32(p, 0x20) // shared
	p = binary.LittleEndian.AppendUint32(p, 0)    // own stack bytes
	rec := append([]byte{KindSample}, binary.LittleEndian.AppendUint32(nil, uint32(len(p)))...)
	return append(append(buf.Bytes(), rec...), p...)
}

// sharedStacks is a recording whose samples share their stack tops.
func sharedStacks(t testing.TB) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	st := bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8}, 16)
	w.Sample(&Sample{Pid: 1, Tid: 1, SP: 0x1000, StackSize: 128, Stack: st})
	w.Sample(&Sample{Pid: 1, Tid: 1, SP: 0x1010, StackSize: 128, Stack: append([]byte{9}, st[17:]...)})
	w.Sample(&Sample{Pid: 1, Tid: 2, SP: 0x1000, StackSize: 128, Stack: st[:64]})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSharedStack checks the delta coding of stack copies: each sample
// reads back with its full stack, and deep common stack tops are stored
// once.
func TestSharedStack(t *testing.T) {
	top := uint64(0x8000)
	mk := func(tid uint32, sp uint64, fill byte) *Sample {
		st := make([]byte, top-sp)
		for i := range st {
			a := sp + uint64(i)
			st[i] = byte(a) ^ byte(a>>8) // same address, same byte
		}
		for i := 0; i < 64 && i < len(st); i++ {
			st[i] = fill // the leaf frames differ between samples
		}
		return &Sample{Pid: 1, Tid: tid, SP: sp, StackSize: 0x8000, Stack: st}
	}
	in := []*Sample{mk(1, 0x1000, 1), mk(1, 0x1100, 2), mk(2, 0x1000, 3), mk(1, 0x0f00, 4), mk(1, 0x7ff8, 5)}
	in = append(in, &Sample{Pid: 1, Tid: 1, SP: 0x9000, Stack: []byte{1, 2, 3, 4, 5, 6, 7, 8}}) // another top
	var buf bytes.Buffer
	w := NewWriter(&buf)
	total := 0
	for _, s := range in {
		total += len(s.Stack)
		c := *s
		c.Stack = append([]byte(nil), s.Stack...)
		w.Sample(&c)
		clear(c.Stack) // the writer must not keep the caller's buffer
	}
	w.Flush()
	// Only the first copy of each thread is written whole.
	if limit := 2*0x7000 + 2048; buf.Len() > limit {
		t.Errorf("%d bytes written for %d bytes of stack, want at most %d", buf.Len(), total, limit)
	}
	var out []*Sample
	if err := Scan(&buf, func(v Entry) error { out = append(out, v.(*Sample)); return nil }); err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if !bytes.Equal(out[i].Stack, in[i].Stack) || out[i].SP != in[i].SP {
			t.Errorf("sample %d: stack differs after the round trip", i)
		}
	}
}

// TestSharedTopChunks compares sharedTop, which skips equal blocks, with
// a word-by-word count on stacks that differ at every distance from the
// top, on either side of a block boundary.
func TestSharedTopChunks(t *testing.T) {
	const top = 0x10000
	naive := func(p, s *Sample) int {
		end := s.SP + uint64(len(s.Stack))
		if len(p.Stack) == 0 || end > p.SP+uint64(len(p.Stack)) || end <= p.SP {
			return 0
		}
		old := p.Stack[:end-p.SP]
		n := 0
		for n+8 <= len(s.Stack) && n+8 <= len(old) &&
			bytes.Equal(s.Stack[len(s.Stack)-n-8:len(s.Stack)-n], old[len(old)-n-8:len(old)-n]) {
			n += 8
		}
		return n
	}
	mk := func(sp uint64) *Sample {
		st := make([]byte, top-sp)
		for i := range st {
			st[i] = byte(sp + uint64(i))
		}
		return &Sample{SP: sp, Stack: st}
	}
	for _, diff := range []int{0, 1, 8, 9, sharedChunk - 8, sharedChunk, sharedChunk + 3, 3*sharedChunk + 16, 0x1000 - 8, -1} {
		for _, sp := range []uint64{top - 0x1000, top - 0x1800, top - 0x800} {
			p, s := mk(top-0x1000), mk(sp)
			if diff >= 0 && diff < len(s.Stack) {
				s.Stack[len(s.Stack)-1-diff] ^= 0xff // differs diff bytes below the top
			}
			if got, want := sharedTop(p, s), naive(p, s); got != want {
				t.Errorf("change %d bytes below the top, sp %#x: shared %d, want %d", diff, sp, got, want)
			}
		}
	}
}

// TestFate checks how a program's end is said and passed on.
func TestFate(t *testing.T) {
	for _, tc := range []struct {
		s     Stats
		fate  string
		shell int
	}{
		{Stats{ExitCode: 0}, "exit status 0", 0},
		{Stats{ExitCode: 3}, "exit status 3", 3},
		{Stats{ExitCode: -1, Signal: 11, SignalName: "SIGSEGV"}, "killed by SIGSEGV", 139},
		{Stats{ExitCode: -1, Signal: 6, SignalName: "SIGABRT", CoreDumped: true}, "killed by SIGABRT (core dumped)", 134},
		{Stats{ExitCode: -1, Signal: 9}, "killed by signal 9", 137},
	} {
		if got := tc.s.Fate(); got != tc.fate {
			t.Errorf("%+v: %q, want %q", tc.s, got, tc.fate)
		}
		if got := tc.s.ShellStatus(); got != tc.shell {
			t.Errorf("%+v: status %d, want %d", tc.s, got, tc.shell)
		}
	}
}

// TestReadVersion1: recordings of version 1 (samples without DI) still
// read, their samples without DI.
func TestReadVersion1(t *testing.T) {
	b := append([]byte(Magic), 1, 0, 0, 0)
	var p []byte
	for _, v := range []uint64{1 | 2<<32, 7, 0x1234, 0x7f00, 9} { // pid, tid; time; ip; sp; bp
		p = binary.LittleEndian.AppendUint64(p, v)
	}
	p = binary.LittleEndian.AppendUint32(p, 16) // stack size
	p = binary.LittleEndian.AppendUint32(p, 0)  // shared
	p = binary.LittleEndian.AppendUint32(p, 1)  // own stack bytes
	p = append(p, 0xaa)
	b = append(append(b, KindSample), binary.LittleEndian.AppendUint32(nil, uint32(len(p)))...)
	b = append(b, p...)
	var got []*Sample
	err := Scan(bytes.NewReader(b), func(v Entry) error {
		if s, ok := v.(*Sample); ok {
			c := *s
			got = append(got, &c)
		}
		return nil
	})
	if err != nil || len(got) != 1 || got[0].IP != 0x1234 || got[0].BP != 9 || got[0].HasDI || got[0].StackSize != 16 || len(got[0].Stack) != 1 {
		t.Fatalf("version 1: %v, %+v", err, got)
	}
}

// TestRoundTripLR: samples of a machine with a link register keep it
// (kind 11), and share their stack tops with the thread's other samples
// as plain ones do.
func TestRoundTripLR(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	stack := bytes.Repeat([]byte{7}, 64)
	in := []Sample{
		{Pid: 1, Tid: 1, Time: 1, IP: 0x400100, SP: 0x7f00, BP: 0x7f40, HasDI: true, LR: 0x400200, HasLR: true, StackSize: 64, Stack: stack},
		{Pid: 1, Tid: 1, Time: 2, IP: 0x400104, SP: 0x7f00, BP: 0x7f40, HasDI: true, StackSize: 64, Stack: stack},
		{Pid: 1, Tid: 1, Time: 3, IP: 0x400108, SP: 0x7f00, BP: 0x7f40, HasDI: true, LR: 0x400300, HasLR: true, StackSize: 64, Stack: stack},
	}
	for i := range in {
		w.Sample(&in[i])
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var got []Sample
	if err := Scan(&buf, func(v Entry) error {
		if s, ok := v.(*Sample); ok {
			got = append(got, *s)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, in) {
		t.Errorf("got  %+v\nwant %+v", got, in)
	}
}

// TestSkimFile reads recordings with ScanFile and SkimFile (and Scan
// and its skim from a reader that cannot discard): the skim must pass
// the same entries but the samples, whose bytes it skips unchecked; a
// sample that runs past the end is still an error.
func TestSkimFile(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Meta(Meta{Command: []string{"prog"}, Event: "cpu-clock", Freq: 99, StackSize: 64})
	stack := bytes.Repeat([]byte{7}, 64)
	for i := range 6 {
		w.Mmap(Mmap{Pid: 1, Tid: 1, Time: uint64(i), Addr: 0x1000 * uint64(i+1), Len: 0x1000, Prot: 5, File: "/lib/x"})
		// The same stack top: later samples share it with earlier ones.
		w.Sample(&Sample{Pid: 1, Tid: 1, Time: uint64(i), IP: 0x1234, SP: 0x7f00, StackSize: 64, Stack: stack})
		w.Sample(&Sample{Pid: 1, Tid: 2, Time: uint64(i), IP: 0x1234, SP: 0x7f00, LR: 5, HasLR: true, StackSize: 64, Stack: stack})
		w.Comm(Comm{Pid: 1, Tid: 2, Time: uint64(i), Name: fmt.Sprint("t", i)})
	}
	w.Lost(2)
	w.Stats(Stats{Samples: 12})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	good := writeAll(t)
	shortSample := append(append([]byte(nil), good...), KindSample, 4, 0, 0, 0, 1, 2, 3, 4)
	cases := []struct {
		name    string
		data    []byte
		samples int    // samples a full scan passes, -1: it fails, at the last record
		want    string // substring of the skim's error; "" for none
	}{
		{"all kinds", good, 1, ""},
		{"shared stacks and LR", buf.Bytes(), 12, ""},
		{"unknown kind", append(append([]byte(nil), good...), 200, 1, 0, 0, 0, 7), 1, ""},
		{"sample too short, not decoded", shortSample, -1, ""},
		{"sample past the end", append(append([]byte(nil), good...), KindSample, 40, 0, 0, 0, 1, 2), -1, "truncated record"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.rec")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			var want []string
			samples := 0
			scanErr := ScanFile(path, func(e Entry) error {
				if _, ok := e.(*Sample); ok {
					samples++
				} else {
					want = append(want, fmt.Sprintf("%T %+v", e, e))
				}
				return nil
			})
			if (tc.samples >= 0) != (scanErr == nil) || tc.samples >= 0 && samples != tc.samples {
				t.Fatalf("full scan: %d samples, %v", samples, scanErr)
			}
			for _, skim := range []func(func(Entry) error) error{
				func(f func(Entry) error) error { return SkimFile(path, f) },
				func(f func(Entry) error) error { return scan(bytes.NewReader(tc.data), true, f) },
			} {
				var got []string
				err := skim(func(e Entry) error {
					got = append(got, fmt.Sprintf("%T %+v", e, e))
					return nil
				})
				if tc.want != "" {
					if err == nil || !strings.Contains(err.Error(), tc.want) {
						t.Errorf("skim: error %v, want one saying %q", err, tc.want)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Errorf("skim:\n%q\nfull scan, samples left out:\n%q", got, want)
				}
			}
		})
	}
}
