package sample

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"

	"bloop/perfevent"
)

// kernelRecord is a ring-buffer record as the kernel writes it for the
// recorder's event: its type, misc bits and body.
type kernelRecord struct {
	typ  uint32
	misc uint16
	body []byte
}

// words appends little-endian fields: uint32s, uint64s and strings
// (NUL-padded to 8 bytes, as the kernel pads names).
func words(fields ...any) []byte {
	var b []byte
	for _, f := range fields {
		switch v := f.(type) {
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, v)
		case uint64:
			b = binary.LittleEndian.AppendUint64(b, v)
		case string:
			b = append(b, v...)
			b = append(b, make([]byte, 8-len(v)%8)...)
		case []byte:
			b = append(b, v...)
		}
	}
	return b
}

// trailer is the sample_id the recorder's attribute adds to non-sample
// records: pid, tid, time.
func trailer(pid, tid uint32, time uint64) []byte { return words(pid, tid, time) }

// kernelRecords is one record of each type the recorder converts, and
// one it ignores.
func kernelRecords() []kernelRecord {
	stack := bytes.Repeat([]byte{0xab}, 64)
	sample := func(tid uint32, size, dyn uint64) []byte {
		return words(uint64(0x401000), uint32(7), tid, uint64(1000+tid), // ip, pid, tid, time
			uint64(2), uint64(0x5eed), uint64(0x7ffc0100), uint64(0x7ffc0000), uint64(0x401234), // abi, di, bp, sp, ip
			size, stack[:size], dyn)
	}
	return []kernelRecord{
		{unix.PERF_RECORD_MMAP2, 2, append(words(uint32(7), uint32(7), uint64(0x400000), uint64(0x2000), uint64(0x1000),
			uint32(8), uint32(1), uint64(99), uint64(3), uint32(5), uint32(2), "/bin/prog"), trailer(7, 7, 500)...)},
		{unix.PERF_RECORD_MMAP, 2, append(words(uint32(7), uint32(8), uint64(0x7f0000), uint64(0x3000), uint64(0),
			"/lib/libc.so.6"), trailer(7, 8, 501)...)},
		{unix.PERF_RECORD_COMM, 0x2000, append(words(uint32(7), uint32(8), "worker"), trailer(7, 8, 502)...)},
		{unix.PERF_RECORD_FORK, 0, append(words(uint32(7), uint32(7), uint32(8), uint32(7), uint64(503)), trailer(7, 8, 503)...)},
		{unix.PERF_RECORD_SAMPLE, 2, sample(8, 64, 64)},
		{unix.PERF_RECORD_SAMPLE, 2, sample(8, 64, 40)},
		{unix.PERF_RECORD_SAMPLE, 1, words(uint64(0xffffffff81000000), uint32(7), uint32(9), uint64(1100), uint64(0), uint64(0))},
		{unix.PERF_RECORD_LOST, 0, append(words(uint64(1), uint64(12)), trailer(0, 0, 600)...)},
		{unix.PERF_RECORD_LOST_SAMPLES, 0, append(words(uint64(5)), trailer(7, 8, 601)...)},
		{unix.PERF_RECORD_THROTTLE, 0, append(words(uint64(602), uint64(1), uint64(1)), trailer(7, 8, 602)...)},
		{unix.PERF_RECORD_UNTHROTTLE, 0, append(words(uint64(603), uint64(1), uint64(1)), trailer(7, 8, 603)...)},
		{unix.PERF_RECORD_EXIT, 0, append(words(uint32(7), uint32(7), uint32(8), uint32(7), uint64(604)), trailer(7, 8, 604)...)},
		{unix.PERF_RECORD_SWITCH, 0, trailer(7, 8, 605)},
	}
}

// TestConvertDecodes feeds kernel records through the recorder's
// converter and through perfevent's decoder directly: the recording holds
// the fields perfevent decodes.
func TestConvertDecodes(t *testing.T) {
	if !archOK {
		t.Skip("register layout known for x86-64 only")
	}
	var buf bytes.Buffer
	var st Stats
	c := &converter{w: NewWriter(&buf), st: &st, stackSize: 64, dec: testDecoder(t, 64)}
	dec := testDecoder(t, 64)
	var want []any
	for _, r := range kernelRecords() {
		c.record(r.typ, r.misc, r.body)
		rec, err := dec.Decode(perfevent.Header{Type: r.typ, Misc: r.misc, Size: uint16(8 + len(r.body))}, r.body)
		if err != nil {
			t.Fatalf("record type %d: %v", r.typ, err)
		}
		if v := expected(rec); v != nil {
			want = append(want, v)
		}
	}
	if err := c.w.Flush(); err != nil {
		t.Fatal(err)
	}
	var got []any
	if err := Scan(&buf, func(e Entry) error {
		var v any = e
		if s, ok := e.(*Sample); ok {
			v = *s
		}
		got = append(got, v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("recording\n got %+v\nwant %+v", got, want)
	}
	wantStats := Stats{Samples: 3, Lost: 1 + 12 + 5, FullStacks: 1, Throttles: 1}
	if st != wantStats {
		t.Errorf("stats %+v, want %+v", st, wantStats)
	}
	if n := dec.UnknownTypes()[unix.PERF_RECORD_SWITCH]; n != 1 {
		t.Errorf("%d SWITCH records counted unknown, want 1", n)
	}
}

// expected is what the recording should hold for a decoded record, from
// perfevent's fields; nil for records it does not keep.
func expected(rec perfevent.Record) any {
	switch r := rec.(type) {
	case *perfevent.Sample:
		if r.RegsABI == 0 {
			return nil
		}
		return Sample{Pid: r.Pid, Tid: r.Tid, Time: r.Time, DI: r.Regs[0], HasDI: true, BP: r.Regs[1], SP: r.Regs[2], IP: r.Regs[3],
			StackSize: uint32(r.StackSize), Stack: append([]byte(nil), r.Stack...)}
	case *perfevent.Mmap:
		prot := r.Prot
		if r.Type == unix.PERF_RECORD_MMAP {
			prot = unix.PROT_EXEC
		}
		return Mmap{Pid: r.Pid, Tid: r.Tid, Time: r.Trailer.Time, Addr: r.Addr, Len: r.Len, Pgoff: r.Pgoff,
			Prot: prot, Flags: r.Flags, File: r.Filename}
	case *perfevent.Comm:
		return Comm{Pid: r.Pid, Tid: r.Tid, Time: r.Trailer.Time, Name: r.Comm}
	case *perfevent.Task:
		t := Task{Pid: r.Pid, Ppid: r.Ppid, Tid: r.Tid, Ptid: r.Ptid, Time: r.Time}
		if r.Type == unix.PERF_RECORD_EXIT {
			return Exit(t)
		}
		return Fork(t)
	case *perfevent.Lost:
		return Lost(r.Lost)
	}
	return nil
}

// TestDecodeKernelRecords checks perfevent's fields for the recorder's
// records against the values the records were built from.
func TestDecodeKernelRecords(t *testing.T) {
	dec := testDecoder(t, 64)
	recs := kernelRecords()
	check := func(i int, want any) {
		t.Helper()
		r := recs[i]
		rec, err := dec.Decode(perfevent.Header{Type: r.typ, Misc: r.misc, Size: uint16(8 + len(r.body))}, r.body)
		if err != nil {
			t.Fatal(err)
		}
		got := reflect.ValueOf(rec).Elem().Interface()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
	id := func(pid, tid uint32, time uint64) perfevent.Trailer {
		return perfevent.Trailer{Fields: perfevent.SampleTID | perfevent.SampleTime, Pid: pid, Tid: tid, Time: time}
	}
	h := func(i int) perfevent.Header {
		return perfevent.Header{Type: recs[i].typ, Misc: recs[i].misc, Size: uint16(8 + len(recs[i].body))}
	}
	check(0, perfevent.Mmap{Header: h(0), Trailer: id(7, 7, 500), Pid: 7, Tid: 7, Addr: 0x400000, Len: 0x2000,
		Pgoff: 0x1000, Maj: 8, Min: 1, Ino: 99, InoGen: 3, Prot: 5, Flags: 2, Filename: "/bin/prog"})
	check(2, perfevent.Comm{Header: h(2), Trailer: id(7, 8, 502), Pid: 7, Tid: 8, Comm: "worker"})
	check(11, perfevent.Task{Header: h(11), Trailer: id(7, 8, 604), Pid: 7, Ppid: 7, Tid: 8, Ptid: 7, Time: 604})
	rec, err := dec.Decode(h(5), recs[5].body)
	if err != nil {
		t.Fatal(err)
	}
	s := rec.(*perfevent.Sample)
	if s.IP != 0x401000 || s.Pid != 7 || s.Tid != 8 || s.Time != 1008 || s.RegsABI != 2 ||
		!reflect.DeepEqual(s.Regs, []uint64{0x5eed, 0x7ffc0100, 0x7ffc0000, 0x401234}) || s.StackSize != 64 || len(s.Stack) != 40 {
		t.Errorf("sample %+v", s)
	}
}
