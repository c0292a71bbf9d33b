package perfevent

import (
	"encoding/binary"
	"strings"
	"testing"
)

// w lays out record fields little-endian: uint32, uint64, uint16, byte
// slices as they are, and strings NUL-padded to a multiple of 8 bytes as
// the kernel pads names.
func w(fields ...any) []byte {
	var b []byte
	for _, f := range fields {
		switch v := f.(type) {
		case uint16:
			b = binary.LittleEndian.AppendUint16(b, v)
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, v)
		case uint64:
			b = binary.LittleEndian.AppendUint64(b, v)
		case int:
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		case []byte:
			b = append(b, v...)
		case string:
			b = append(b, v...)
			b = append(b, make([]byte, 8-len(v)%8)...)
		default:
			panic("w: field of unknown type")
		}
	}
	return b
}

type u32 = uint32

const (
	tidTime = SampleTID | SampleTime
	all     = FlagSampleIDAll
)

// ev makes an event with a sample type, flags and ids.
func ev(name string, st, flags uint64, ids ...uint64) *Event {
	return &Event{Name: name, Attr: Attr{SampleType: st, Flags: flags}, IDs: ids}
}

// decodeTests are hand-built records and their expected rendering. Each
// decodes with the events given (by default one event "e" of the sample
// type st, with sample_id_all).
var decodeTests = []struct {
	name   string
	events []*Event
	typ    uint32
	misc   uint16
	body   []byte
	want   string // Format's line, or the start of the error with "error: "
}{
	{"sample ip tid time period", []*Event{ev("e", SampleIP|tidTime|SamplePeriod, all)}, RecordSample, MiscUser,
		w(0x401000, u32(7), u32(8), 1000, 250000),
		"SAMPLE misc=0x2 event=e ip=0x401000 pid=7 tid=8 time=1000 period=250000"},
	{"identifier picks the event", []*Event{ev("a", SampleIdentifier|SampleIP, all, 1, 2), ev("b", SampleIdentifier|SampleIP, all, 3)}, RecordSample, 0,
		w(3, 0x10),
		"SAMPLE misc=0x0 event=b id=3 ip=0x10"},
	{"id after ip tid time addr", []*Event{ev("a", SampleIP|tidTime|SampleAddr|SampleID|SampleCPU, all, 5), ev("b", SampleIP|tidTime|SampleAddr|SampleID|SampleCPU, all, 6)}, RecordSample, 0,
		w(0x10, u32(1), u32(2), 3, 0xdead, 6, u32(1), u32(0)),
		"SAMPLE misc=0x0 event=b id=6 ip=0x10 pid=1 tid=2 time=3 addr=0xdead cpu=1"},
	{"stream id and cpu", []*Event{ev("e", SampleStreamID|SampleCPU, all)}, RecordSample, 0,
		w(77, u32(3), u32(0)),
		"SAMPLE misc=0x0 event=e stream=77 cpu=3"},
	{"read, then callchain", []*Event{{Name: "e", Attr: Attr{SampleType: SampleRead | SampleCallchain,
		ReadFormat: FormatTotalTimeEnabled | FormatTotalTimeRunning | FormatID | FormatLost}}}, RecordSample, 0,
		w(100, 10, 9, 4, 0, 2, ContextUser, 0x401000),
		"SAMPLE misc=0x0 event=e read=40 bytes callchain=[user: 0x401000]"},
	{"group read, then callchain", []*Event{{Name: "e", Attr: Attr{SampleType: SampleRead | SampleCallchain,
		ReadFormat: FormatGroup | FormatID}}}, RecordSample, 0,
		w(2, 100, 4, 200, 5, 1, 0x401000),
		"SAMPLE misc=0x0 event=e read=40 bytes callchain=[0x401000]"},
	{"callchain with contexts", []*Event{ev("e", SampleCallchain, 0)}, RecordSample, 0,
		w(4, ContextKernel, uint64(0xffffffff81000000), ContextUser, 0x401000),
		"SAMPLE misc=0x0 event=e callchain=[kernel: 0xffffffff81000000 user: 0x401000]"},
	{"raw, branches with index, regs", []*Event{{Name: "e", Attr: Attr{SampleType: SampleRaw | SampleBranchStack | SampleRegsUser,
		BranchSampleType: BranchHWIndex, SampleRegsUser: 1<<6 | 1<<7}}}, RecordSample, 0,
		w(u32(4), u32(0xcafe), 1, 0, 0x10, 0x20, 0, 2, 0x7ff0, 0x7fe0),
		"SAMPLE misc=0x0 event=e raw=feca0000 branches=40 bytes regs=2[0x7ff0 0x7fe0]"},
	{"branches with counters", []*Event{{Name: "e", Attr: Attr{SampleType: SampleBranchStack | SamplePhysAddr,
		BranchSampleType: BranchCounters}}}, RecordSample, 0,
		w(2, 1, 2, 0, 3, 4, 0, 7, 8, 0x1000),
		"SAMPLE misc=0x0 event=e branches=72 bytes phys=0x1000"},
	{"kernel thread: no user regs, no stack", []*Event{{Name: "e", Attr: Attr{SampleType: SampleRegsUser | SampleStackUser | SamplePeriod,
		SampleRegsUser: 7}}}, RecordSample, MiscKernel,
		w(1, 0, 0),
		"SAMPLE misc=0x1 event=e period=1 regs=0[] stack=0/0"},
	{"user regs and stack", []*Event{{Name: "e", Attr: Attr{SampleType: SampleRegsUser | SampleStackUser | SampleWeight,
		SampleRegsUser: 1<<6 | 1<<7 | 1<<8}}}, RecordSample, 0,
		w(2, 0x7f10, 0x7f00, 0x401000, 16, []byte("0123456789abcdef"), 8, 99),
		"SAMPLE misc=0x0 event=e regs=2[0x7f10 0x7f00 0x401000] stack=8/16 weight=0x63"},
	{"the fields after the stack", []*Event{{Name: "e", Attr: Attr{SampleType: SampleWeightStruct | SampleDataSrc |
		SampleTransaction | SampleRegsIntr | SamplePhysAddr | SampleCgroup | SampleDataPageSize | SampleCodePageSize | SampleAux,
		SampleRegsIntr: 1<<0 | 1<<3}}}, RecordSample, 0,
		w(uint64(0x0004000300000002), 0x42, 0x6, 2, 11, 22, 0x5000, 9, 4096, 2097152, 8, []byte("auxdata!")),
		"SAMPLE misc=0x0 event=e weight=0x4000300000002 datasrc=0x42 txn=0x6 intr=2[0xb 0x16] phys=0x5000 cgroup=9 datapage=4096 codepage=2097152 aux=6175786461746121"},
	{"mmap with every trailer field", []*Event{ev("e", tidTime|SampleID|SampleStreamID|SampleCPU|SampleIdentifier, all, 9)}, RecordMmap, MiscUser,
		w(u32(7), u32(7), 0x400000, 0x1000, 0, "/bin/x", u32(7), u32(7), 500, 9, 1, u32(1), u32(0), 9),
		`MMAP misc=0x2 pid=7 tid=7 addr=0x400000 len=0x1000 pgoff=0x0 file="/bin/x" | pid=7 tid=7 time=500 id=9 stream=1 cpu=1`},
	{"mmap2 with device and inode", []*Event{ev("e", tidTime, all)}, RecordMmap2, MiscUser,
		w(u32(7), u32(8), 0x7f0000, 0x2000, 0x1000, u32(254), u32(0), 5350492, uint64(2307917976), u32(5), u32(2), "/lib/libm.so.6", u32(7), u32(8), 501),
		`MMAP2 misc=0x2 pid=7 tid=8 addr=0x7f0000 len=0x2000 pgoff=0x1000 dev=254:0 ino=5350492 gen=2307917976 prot=5 flags=0x2 file="/lib/libm.so.6" | pid=7 tid=8 time=501`},
	{"mmap2 with build-id", []*Event{ev("e", tidTime, all)}, RecordMmap2, MiscUser | MiscMmapBuildID,
		w(u32(7), u32(8), uint64(0x55fe2afb1000), 0x1000, 0x1000, []byte{20, 0, 0, 0}, []byte("\x88\x84\x18\x7d\xa0\xd3\xa2\x79\x1a\x2a\xf4\x08\x49\x16\x44\x3c\x65\x0b\x6a\xe5"),
			u32(5), u32(2), "/bin/prog", u32(7), u32(8), 502),
		`MMAP2 misc=0x4002 pid=7 tid=8 addr=0x55fe2afb1000 len=0x1000 pgoff=0x1000 buildid=8884187da0d3a2791a2af4084916443c650b6ae5 prot=5 flags=0x2 file="/bin/prog" | pid=7 tid=8 time=502`},
	{"comm of an exec", []*Event{ev("e", tidTime, all)}, RecordComm, MiscCommExec,
		w(u32(7), u32(7), "prog", u32(7), u32(7), 503),
		`COMM misc=0x2000 pid=7 tid=7 comm="prog" | pid=7 tid=7 time=503`},
	{"fork", []*Event{ev("e", tidTime, all)}, RecordFork, 0,
		w(u32(7), u32(7), u32(9), u32(7), 504, u32(7), u32(9), 504),
		"FORK misc=0x0 pid=7 ppid=7 tid=9 ptid=7 time=504 | pid=7 tid=9 time=504"},
	{"exit without sample_id_all", []*Event{ev("e", tidTime, 0)}, RecordExit, 0,
		w(u32(7), u32(7), u32(9), u32(7), 505),
		"EXIT misc=0x0 pid=7 ppid=7 tid=9 ptid=7 time=505"},
	{"lost", []*Event{ev("e", SampleIdentifier, all, 4)}, RecordLost, 0,
		w(4, 12, 4),
		"LOST misc=0x0 id=4 lost=12 | id=4"},
	{"lost samples", []*Event{ev("e", 0, all)}, RecordLostSamples, 0,
		w(3),
		"LOST_SAMPLES misc=0x0 id=0 lost=3"},
	{"throttle", []*Event{ev("e", SampleTime, all)}, RecordThrottle, 0,
		w(600, 1, 2, 600),
		"THROTTLE misc=0x0 time=600 id=1 stream=2 | time=600"},
	{"unthrottle", []*Event{ev("e", SampleTime, all)}, RecordUnthrottle, 0,
		w(601, 1, 2, 601),
		"UNTHROTTLE misc=0x0 time=601 id=1 stream=2 | time=601"},
	{"unknown type", []*Event{ev("e", tidTime, all)}, RecordSwitch, 0,
		w(u32(7), u32(7), 606),
		"type 14 misc=0x0 body=16 bytes"},
	{"perf's own record", []*Event{ev("e", tidTime, all)}, RecordFinishedRound, 0,
		nil,
		"type 68 misc=0x0 body=0 bytes"},
	{"made-up record of id 0 takes the first event's layout", []*Event{ev("a", SampleIP|SampleID|SampleTID, all, 1), ev("b", SampleIP|SampleID|SampleTID, all, 2)}, RecordComm, 0,
		w(u32(1), u32(1), "perf", u32(0), u32(0), 0),
		`COMM misc=0x0 pid=1 tid=1 comm="perf" | pid=0 tid=0 id=0`},
	{"no events", nil, RecordComm, 0,
		w(u32(1), u32(1), "x"),
		`COMM misc=0x0 pid=1 tid=1 comm="x"`},

	{"truncated sample", []*Event{ev("e", SampleIP|tidTime, all)}, RecordSample, 0,
		w(0x10, u32(1), u32(2)),
		`error: SAMPLE record of "e": time (8 bytes) at byte 24 runs past the record's end at byte 24`},
	{"huge callchain", []*Event{ev("e", SampleCallchain, 0)}, RecordSample, 0,
		w(uint64(1<<62), 0x10),
		`error: SAMPLE record of "e": callchain (4611686018427387904 words) at byte 16 runs past the record's end at byte 24`},
	{"huge read group", []*Event{{Name: "e", Attr: Attr{SampleType: SampleRead, ReadFormat: FormatGroup}}}, RecordSample, 0,
		w(uint64(1<<40), 1),
		`error: SAMPLE record of "e": read group (1099511627776 entries) at byte 8`},
	{"huge branch stack", []*Event{ev("e", SampleBranchStack, 0)}, RecordSample, 0,
		w(2, 1, 2, 3),
		`error: SAMPLE record of "e": branch stack (2 entries) at byte 8`},
	{"stack copied beyond its size", []*Event{ev("e", SampleStackUser, 0)}, RecordSample, 0,
		w(8, 1, 9),
		`error: SAMPLE record of "e": user stack of 8 bytes says 9 were copied`},
	{"sample of no event", []*Event{ev("a", SampleIdentifier, all, 1), ev("b", SampleIdentifier, all, 2)}, RecordSample, 0,
		w(3),
		"error: SAMPLE record has event id 3, which no event has"},
	{"sample without event", nil, RecordSample, 0,
		w(3),
		"error: SAMPLE record without an event attribute"},
	{"record shorter than its trailer", []*Event{ev("e", tidTime, all)}, RecordExit, 0,
		w(u32(1)),
		"error: EXIT record of 12 bytes is shorter than its sample_id fields (16 bytes)"},
	{"short fork", []*Event{ev("e", 0, 0)}, RecordFork, 0,
		w(u32(1), u32(1)),
		"error: FORK record: tid (4 bytes) at byte 16"},
}

func TestDecode(t *testing.T) {
	for _, tc := range decodeTests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := NewDecoder(tc.events...)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := d.Decode(Header{Type: tc.typ, Misc: tc.misc, Size: uint16(8 + len(tc.body))}, tc.body)
			got := ""
			if err != nil {
				got = "error: " + err.Error()
			} else {
				got = Format(rec)
			}
			if !strings.HasPrefix(got, tc.want) || err == nil && got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestUnknownCounted(t *testing.T) {
	d, _ := NewDecoder(ev("e", 0, 0))
	for range 3 {
		d.Decode(Header{Type: RecordSwitch, Size: 8}, nil)
	}
	d.Decode(Header{Type: 200, Size: 8}, nil)
	if got := d.UnknownTypes(); got[RecordSwitch] != 3 || got[200] != 1 || len(got) != 2 {
		t.Errorf("unknown counts %v", got)
	}
}

// TestAddEventRefuses checks the event sets whose records cannot be
// told apart.
func TestAddEventRefuses(t *testing.T) {
	tests := []struct {
		name   string
		events []*Event
		want   string
	}{
		{"ids in different places", []*Event{ev("a", SampleIP|SampleID, all, 1), ev("b", SampleIP|SampleTID|SampleID, all, 2)}, "different places"},
		{"no ids", []*Event{ev("a", SampleIP, all), ev("b", SampleIP, all)}, "samples carry no event id"},
		{"shared id", []*Event{ev("a", SampleIdentifier, all, 1, 2), ev("b", SampleIdentifier, all, 2)}, "id 2 belongs to two events"},
	}
	for _, tc := range tests {
		if _, err := NewDecoder(tc.events...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestDecodeNoAllocs checks that decoding a sample allocates nothing
// once the decoder's buffers have grown: the recorder decodes every
// sample of the ring buffer.
func TestDecodeNoAllocs(t *testing.T) {
	d, _ := NewDecoder(&Event{Attr: Attr{SampleType: SampleIP | tidTime | SampleCallchain | SampleRegsUser | SampleStackUser,
		SampleRegsUser: 7}})
	body := w(0x10, u32(1), u32(2), 3, 2, ContextUser, 0x10, 2, 1, 2, 3, 16, make([]byte, 16), 16)
	h := Header{Type: RecordSample, Size: uint16(8 + len(body))}
	if _, err := d.Decode(h, body); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { d.Decode(h, body) }); n != 0 {
		t.Errorf("%.1f allocations per sample", n)
	}
}
