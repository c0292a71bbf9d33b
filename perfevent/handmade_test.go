package perfevent

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// Two events told apart by their identifier, as perf records them.
func twoEvents() []*Event {
	st := uint64(SampleIdentifier | SampleIP | SampleTID | SampleTime | SamplePeriod)
	return []*Event{
		{Name: "cycles", Attr: Attr{Type: TypeHardware, Config: 0, SampleType: st, Flags: FlagSampleIDAll}, IDs: []uint64{11, 12}},
		{Name: "instructions", Attr: Attr{Type: TypeHardware, Config: 1, SampleType: st, Flags: FlagSampleIDAll}, IDs: []uint64{21, 22}},
	}
}

// someRecords are records of twoEvents: a comm, a mapping, a sample of
// each event and a round's end.
func someRecords() [][]byte {
	trailer := func(id uint64) []byte { return w(u32(7), u32(7), 100, id) }
	return [][]byte{
		rec(RecordComm, MiscCommExec, append(w(u32(7), u32(7), "prog"), trailer(11)...)),
		rec(RecordMmap2, MiscUser, append(w(u32(7), u32(7), 0x400000, 0x1000, 0, u32(8), u32(1), 5, 0, u32(5), u32(2), "/bin/prog"), trailer(11)...)),
		rec(RecordSample, MiscUser, w(12, 0x400010, u32(7), u32(7), 200, 1000000)),
		rec(RecordSample, MiscUser, w(21, 0x400020, u32(7), u32(7), 300, 2000000)),
		rec(RecordFinishedRound, 0, nil),
	}
}

// wantLines are someRecords as Format renders them.
var wantLines = []string{
	`COMM misc=0x2000 pid=7 tid=7 comm="prog" | pid=7 tid=7 time=100 id=11`,
	`MMAP2 misc=0x2 pid=7 tid=7 addr=0x400000 len=0x1000 pgoff=0x0 dev=8:1 ino=5 gen=0 prot=5 flags=0x2 file="/bin/prog" | pid=7 tid=7 time=100 id=11`,
	"SAMPLE misc=0x2 event=cycles id=12 ip=0x400010 pid=7 tid=7 time=200 period=1000000",
	"SAMPLE misc=0x2 event=instructions id=21 ip=0x400020 pid=7 tid=7 time=300 period=2000000",
	"type 68 misc=0x0 body=0 bytes",
}

// formatAll reads the records of data as Format renders them.
func formatAll(t *testing.T, data []byte) (*File, []string) {
	t.Helper()
	f, err := NewFile(bytes.NewReader(data), int64(len(data)), "test.data")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	if err := f.Records(func(r Record) error {
		lines = append(lines, Format(r))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return f, lines
}

func TestHandMadeFile(t *testing.T) {
	events := twoEvents()
	named := []*Event{{Name: "cycles:u", Attr: events[0].Attr, IDs: events[0].IDs}, {Name: "instructions:u", Attr: events[1].Attr, IDs: events[1].IDs}}
	data := LayoutFile(events, bytes.Join(someRecords(), nil), map[int][]byte{
		FeatCmdline:   CmdlineFeature("perf", "record", "-e", "cycles:u,instructions:u"),
		FeatEventDesc: eventDescFeature(named...),
		FeatHostname:  HeaderString("box"),
		FeatNrCPUs:    w(u32(4), u32(2)),
		FeatBuildID:   buildIDRecord(RecordHeaderBuildID, 7, []byte{1, 2, 3, 4}, "/bin/prog"),
	})
	f, lines := formatAll(t, data)
	want := slices.Clone(wantLines)
	want[2] = strings.Replace(want[2], "event=cycles", "event=cycles:u", 1)
	want[3] = strings.Replace(want[3], "event=instructions", "event=instructions:u", 1)
	if !slices.Equal(lines, want) {
		t.Errorf("records\n got %q\nwant %q", lines, want)
	}
	ft := f.Features
	if f.Pipe || strings.Join(ft.Cmdline, " ") != "perf record -e cycles:u,instructions:u" || ft.Hostname != "box" ||
		ft.NrCPUsAvail != 4 || ft.NrCPUsOnline != 2 || !bytes.Equal(ft.BuildIDs["/bin/prog"], []byte{1, 2, 3, 4}) ||
		!slices.Equal(ft.Present, []int{FeatBuildID, FeatHostname, FeatNrCPUs, FeatCmdline, FeatEventDesc}) {
		t.Errorf("features %+v", ft)
	}
	if n := f.UnknownTypes()[RecordFinishedRound]; n != 1 {
		t.Errorf("%d FINISHED_ROUND records counted", n)
	}
}

// TestStream reads a stream whose events, names, features and build-ids
// come as records among the others, with the records followed by data
// of their own (tracing data, auxtrace), twice over.
func TestStream(t *testing.T) {
	events := twoEvents()
	recs := someRecords()
	tracing := append(rec(RecordHeaderTracingData, 0, w(u32(16), u32(0))), bytes.Repeat([]byte{0xee}, 16)...)
	aux := append(rec(RecordAuxtrace, 0, w(24, 0, 0, u32(0), u32(7), u32(0), u32(0))), bytes.Repeat([]byte{0xaa}, 24)...)
	stream := pipeStream(attrRecord(events[0]), attrRecord(events[1]),
		featureRecord(FeatCmdline, CmdlineFeature("perf", "record", "-o", "-")),
		featureRecord(FeatTracingData, []byte("ignored")),
		tracing, recs[0], nameRecord(11, "cycles:u"), nameRecord(21, "instructions:u"), recs[1], recs[2], aux, recs[3],
		buildIDRecord(RecordHeaderBuildID, 7, []byte{9, 9}, "/bin/prog"), recs[4])
	f, lines := formatAll(t, stream)
	want := slices.Clone(wantLines)
	want[2] = strings.Replace(want[2], "event=cycles", "event=cycles:u", 1)
	want[3] = strings.Replace(want[3], "event=instructions", "event=instructions:u", 1)
	if !slices.Equal(lines, want) {
		t.Errorf("records\n got %q\nwant %q", lines, want)
	}
	if !f.Pipe || len(f.Events) != 2 || strings.Join(f.Features.Cmdline, " ") != "perf record -o -" ||
		!bytes.Equal(f.Features.BuildIDs["/bin/prog"], []byte{9, 9}) {
		t.Errorf("pipe %v, events %d, features %+v", f.Pipe, len(f.Events), f.Features)
	}
	n := 0
	if err := f.Records(func(Record) error { n++; return nil }); err != nil || n != len(wantLines) || len(f.Events) != 2 {
		t.Errorf("second pass: %d records, %d events, %v", n, len(f.Events), err)
	}
	stop := errors.New("stop")
	if err := f.Records(func(Record) error { return stop }); err != stop {
		t.Errorf("the callback's error came back as %v", err)
	}
}

// TestCompressed reads records compressed into one zstd stream flushed
// at arbitrary points, so that records straddle COMPRESSED records, of
// both kinds.
func TestCompressed(t *testing.T) {
	events := twoEvents()
	plain := bytes.Join(someRecords(), nil)
	var zbuf bytes.Buffer
	enc, err := zstd.NewWriter(&zbuf, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	var payloads [][]byte
	for _, cut := range [][2]int{{0, 5}, {5, 70}, {70, 71}, {71, len(plain)}} {
		enc.Write(plain[cut[0]:cut[1]])
		enc.Flush()
		payloads = append(payloads, slices.Clone(zbuf.Bytes()))
		zbuf.Reset()
	}
	var data []byte
	for i, p := range payloads {
		if i%2 == 0 {
			data = append(data, rec(RecordCompressed, 0, p)...)
		} else {
			pad := make([]byte, (8-len(p)%8)%8)
			data = append(data, rec(RecordCompressed2, 0, append(w(uint64(len(p)), p), pad...))...)
		}
	}
	data = append(data, rec(RecordFinishedRound, 0, nil)...)
	file := LayoutFile(events, data, map[int][]byte{FeatCompressed: w(u32(0), u32(compressZstd), u32(1), u32(3), u32(1<<16))})
	_, lines := formatAll(t, file)
	want := append(slices.Clone(wantLines), "type 68 misc=0x0 body=0 bytes")
	if !slices.Equal(lines, want) {
		t.Errorf("records\n got %q\nwant %q", lines, want)
	}
	noFeature := LayoutFile(events, data, nil)
	f, err := NewFile(bytes.NewReader(noFeature), int64(len(noFeature)), "x.data")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Records(func(Record) error { return nil }); err == nil || !strings.Contains(err.Error(), "names no zstd compression") {
		t.Errorf("compressed records without HEADER_COMPRESSED: %v", err)
	}
}

func TestIsPerfData(t *testing.T) {
	for _, tc := range []struct {
		head string
		want bool
	}{{"PERFILE2\x68", true}, {"2ELIFREP", true}, {"PERFFILE", true}, {"PERFILE", false}, {"\x7fELF\x02\x01\x01\x00", false}, {"BLOOPREC", false}} {
		if got := IsPerfData([]byte(tc.head)); got != tc.want {
			t.Errorf("%q: %v", tc.head, got)
		}
	}
}

// TestFileErrors checks that damaged files give errors that name the
// file and what is wrong, where.
func TestFileErrors(t *testing.T) {
	events := twoEvents()
	good := LayoutFile(events, bytes.Join(someRecords(), nil), map[int][]byte{FeatCmdline: CmdlineFeature("perf")})
	set := func(b []byte, off int, v uint64) []byte {
		b = slices.Clone(b)
		binary.LittleEndian.PutUint64(b[off:], v)
		return b
	}
	dataOff := int(binary.LittleEndian.Uint64(good[40:]))
	tests := []struct {
		name string
		data []byte
		want string // in the error of Open, or else of Records
	}{
		{"empty", nil, "too short"},
		{"not perf", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"), "no PERFILE2 magic"},
		{"big-endian", append([]byte("2ELIFREP"), good[8:]...), "big-endian perf.data"},
		{"first format", append([]byte("PERFFILE"), good[8:]...), "first format (PERFFILE)"},
		{"header size", set(good, 8, 50), "header size 50"},
		{"data beyond the end", set(good, 48, 1<<40), "data section (1099511627776 bytes at offset"},
		{"attribute entries", set(good, 16, 100), "not a whole number of 100-byte entries"},
		{"attribute size", set(good, 16, 304), "attribute at offset 0x68 is 136 bytes in entries of 304"},
		{"ids beyond the end", set(good, fileHeaderSize+AttrSizeVer8, 1<<20), "the ids of attribute 0"},
		{"feature table beyond the end", set(good, 48, uint64(len(good)-dataOff)), "the feature table"},
		{"unfinished", append(set(set(good[:dataOff+8], 48, 0), 72, 0), make([]byte, 32)...), "perf record did not finish writing this file"},
		{"two events, no place for ids", LayoutFile([]*Event{{Attr: Attr{SampleType: SampleIP}, IDs: []uint64{1}}, {Attr: Attr{SampleType: SampleIP}, IDs: []uint64{2}}}, nil, nil), "cannot be told apart"},
		{"feature section", LayoutFile(events, nil, map[int][]byte{FeatCmdline: w(u32(1 << 30))}), "feature cmdline: 1073741824 entries at byte 4"},
		{"short record", LayoutFile(events, rec(RecordSample, 0, nil)[:4], nil), "4 stray bytes at offset"},
		{"record of 4 bytes", LayoutFile(events, w(u32(9), uint16(0), uint16(4)), nil), "record of 4 bytes (type 9)"},
		{"record past the data", LayoutFile(events, w(u32(9), uint16(0), uint16(64)), nil), "record of 64 bytes (type 9)"},
		{"bad sample", LayoutFile(events, rec(RecordSample, 0, w(99)), nil), "record at offset 0x1b8: malformed perf data: SAMPLE record has event id 99"},
		{"stream without events", pipeStream(rec(RecordSample, 0, w(1))), "without event attributes"},
		{"truncated stream", pipeStream(attrRecord(events[0]), attrRecord(events[1]), someRecords()[2][:20]), "record of 48 bytes (type 9) at offset"},
		{"auxtrace past the end", pipeStream(attrRecord(events[0]), someRecords()[2], rec(RecordAuxtrace, 0, w(1000))), "1000 bytes of data after the record"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewFile(bytes.NewReader(tc.data), int64(len(tc.data)), "bad.data")
			if err == nil {
				err = f.Records(func(Record) error { return nil })
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "bad.data: ") {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
