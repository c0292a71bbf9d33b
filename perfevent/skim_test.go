package perfevent

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// decodedKernel is what RawSample.KernelFrames must answer for a sample
// Decode accepts: taken in the kernel, or a kernel part in its chain.
func decodedKernel(s *Sample) bool {
	return s.CPUMode() == MiscKernel || slices.Contains(s.Callchain, ContextKernel)
}

// skimLine renders a record so that a full walk's and a skim's compare:
// a sample by its header and whether it has kernel frames, any other
// record by all its fields.
func skimLine(t *testing.T, r Record) string {
	if l, ok := sampleLine(r); ok {
		return l
	}
	return fmt.Sprintf("%T %s", r, gobHex(t, r))
}

// sampleLine renders a sample, decoded or raw, by its header, its size
// and whether it has kernel frames.
func sampleLine(r Record) (string, bool) {
	switch r := r.(type) {
	case *Sample:
		return fmt.Sprintf("SAMPLE %+v kernel=%v", r.Header, decodedKernel(r)), true
	case *RawSample:
		if len(r.Body)+headerSize != int(r.Size) {
			return fmt.Sprintf("raw sample of %d bytes with a body of %d", r.Size, len(r.Body)), true
		}
		return fmt.Sprintf("SAMPLE %+v kernel=%v", r.Header, r.KernelFrames()), true
	}
	return "", false
}

// walkLines renders every record of a walk (Records or Skim).
func walkLines(t *testing.T, walk func(func(Record) error) error, f *File) []string {
	t.Helper()
	var out []string
	if err := walk(func(r Record) error {
		out = append(out, skimLine(t, r))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// gobHex encodes v, pointers followed, for comparisons.
func gobHex(t *testing.T, v any) string {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		t.Fatalf("encoding %T: %v", v, err)
	}
	return fmt.Sprintf("%x", b.Bytes())
}

// TestSkimSameRecords walks every committed perf.data file (compressed
// and pipe ones among them), mapped and read through a buffer, and the
// hand-made file and stream, with Skim and then Records on one File,
// and with Records alone on another: the records but the samples, the
// samples' headers and whether they have kernel frames, and the events
// and features learned must be the same.
func TestSkimSameRecords(t *testing.T) {
	type input struct {
		name string
		open func(t *testing.T) *File
	}
	var inputs []input
	for _, c := range committed {
		path := filepath.Join("testdata", c.name+".data")
		inputs = append(inputs, input{c.name + "/mapped", func(t *testing.T) *File {
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}}, input{c.name + "/read", func(t *testing.T) *File {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			return openBytes(t, b)
		}})
	}
	events := twoEvents()
	recs := someRecords()
	file := LayoutFile(events, bytes.Join(recs, nil), map[int][]byte{FeatCmdline: CmdlineFeature("perf", "record")})
	stream := pipeStream(attrRecord(events[0]), attrRecord(events[1]), recs[0], nameRecord(11, "cycles:u"), recs[1],
		append(rec(RecordHeaderTracingData, 0, w(u32(8), u32(0))), make([]byte, 8)...), recs[2], recs[3], recs[4])
	inputs = append(inputs, input{"handmade-file", func(t *testing.T) *File { return openBytes(t, file) }},
		input{"handmade-stream", func(t *testing.T) *File { return openBytes(t, stream) }})
	kernel := map[bool]int{}
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			full := in.open(t)
			defer full.Close()
			want := walkLines(t, full.Records, full)
			f := in.open(t)
			defer f.Close()
			got := walkLines(t, f.Skim, f)
			if !slices.Equal(got, want) {
				t.Fatalf("skim:\n%s\nfull walk:\n%s", diffLines(got, want), diffLines(want, got))
			}
			if !reflect.DeepEqual(f.Events, full.Events) || !reflect.DeepEqual(f.Features, full.Features) {
				t.Fatalf("events and features after a skim:\n%+v %+v\nafter a full walk:\n%+v %+v", f.Events, f.Features, full.Events, full.Features)
			}
			// A full walk after a skim decodes the samples again.
			samples := 0
			if err := f.Records(func(r Record) error {
				if s, ok := r.(*Sample); ok {
					samples++
					kernel[decodedKernel(s)]++
				}
				return nil
			}); err != nil || samples == 0 {
				t.Errorf("Records after Skim: %d samples, %v", samples, err)
			}
		})
	}
	if kernel[true] == 0 || kernel[false] == 0 {
		t.Errorf("samples with and without kernel frames: %v; the comparison needs both", kernel)
	}
}

// openBytes reads perf data from memory (through a buffer, not mapped).
func openBytes(t *testing.T, b []byte) *File {
	t.Helper()
	f, err := NewFile(bytes.NewReader(b), int64(len(b)), "test.data")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// diffLines returns the lines of a not in b, at most 10.
func diffLines(a, b []string) string {
	var out bytes.Buffer
	n := 0
	for i, l := range a {
		if !slices.Contains(b, l) && n < 10 {
			fmt.Fprintf(&out, "  %d: %.200s\n", i, l)
			n++
		}
	}
	fmt.Fprintf(&out, "  (%d lines)", len(a))
	return out.String()
}

// TestKernelFrames checks RawSample.KernelFrames on hand-made samples
// against Decode: the same answer for every sample Decode accepts (the
// callchain found past the fields before it, whatever they are), and
// true for those it refuses.
func TestKernelFrames(t *testing.T) {
	chain := uint64(SampleIP | SampleTID | SampleCallchain)
	withID := uint64(SampleIdentifier | SampleIP | SampleTID | SampleTime | SampleCPU | SamplePeriod)
	kaddr, uaddr := uint64(0xffffffff81000010), uint64(0x400010)
	one := func(st, rf uint64) []*Event {
		return []*Event{{Name: "e", Attr: Attr{SampleType: st, ReadFormat: rf}}}
	}
	two := []*Event{
		{Name: "chain", Attr: Attr{SampleType: withID | SampleCallchain}, IDs: []uint64{1}},
		{Name: "nochain", Attr: Attr{SampleType: withID}, IDs: []uint64{2}},
	}
	tid := u32(7)
	cases := []struct {
		name   string
		events []*Event
		misc   uint16
		body   []byte
		want   bool
	}{
		{"kernel mode, no callchain", one(SampleIP, 0), MiscKernel, w(kaddr), true},
		{"user mode, no callchain", one(SampleIP, 0), MiscUser, w(uaddr), false},
		{"user chain", one(chain, 0), MiscUser, w(uaddr, tid, tid, 2, ContextUser, uaddr), false},
		{"empty chain", one(chain, 0), MiscUser, w(uaddr, tid, tid, 0), false},
		{"kernel mode, kernel chain", one(chain, 0), MiscKernel, w(kaddr, tid, tid, 4, ContextKernel, kaddr, ContextUser, uaddr), true},
		// PEBS and SIAR: the sampled IP is the user's, the interrupt
		// came in the kernel.
		{"user mode, kernel chain", one(chain, 0), MiscUser, w(uaddr, tid, tid, 4, ContextKernel, kaddr, ContextUser, uaddr), true},
		{"kernel marker last", one(chain, 0), MiscUser, w(uaddr, tid, tid, 3, ContextUser, uaddr, ContextKernel), true},
		{"guest kernel", one(chain, 0), MiscGuestKernel, w(uaddr, tid, tid, 2, ContextGuestKernel, kaddr), false},
		{"hypervisor", one(chain, 0), MiscHypervisor, w(uaddr, tid, tid, 2, ContextHV, kaddr), false},
		{"read value before", one(chain|SampleRead, FormatID), MiscUser, w(uaddr, tid, tid, 5, 9, 2, ContextKernel, kaddr), true},
		{"read group before", one(chain|SampleRead|SampleTime|SamplePeriod, FormatGroup|FormatID), MiscUser,
			w(uaddr, tid, tid, 100, 1000, 2, 5, 11, 6, 12, 2, ContextKernel, kaddr), true},
		{"read group, words like a kernel marker", one(chain|SampleRead, FormatGroup), MiscUser,
			w(uaddr, tid, tid, 1, ContextKernel, 1, ContextUser), false},
		{"chain with kernel, later fields", one(chain|SampleRegsUser|SampleStackUser, 0), MiscUser,
			w(uaddr, tid, tid, 1, ContextKernel, 0, 0), true},
		{"second event, no chain", two, MiscUser, w(2, uaddr, tid, tid, 5, u32(0), u32(0), 1000), false},
		{"first event, kernel chain", two, MiscUser, w(1, uaddr, tid, tid, 5, u32(0), u32(0), 1000, 1, ContextKernel), true},
		{"first event, user chain", two, MiscUser, w(1, uaddr, tid, tid, 5, u32(0), u32(0), 1000, 1, ContextUser), false},
		{"unknown event", two, MiscUser, w(3, uaddr, tid, tid, 5, u32(0), u32(0), 1000, 0), true},
		{"chain past the end", one(chain, 0), MiscUser, w(uaddr, tid, tid, 5, ContextUser), true},
		{"no room for the count", one(chain, 0), MiscUser, w(uaddr, tid, tid), true},
		{"shorter than the fields before", one(chain, 0), MiscUser, w(uaddr), true},
		{"read group past the end", one(chain|SampleRead, FormatGroup), MiscUser, w(uaddr, tid, tid, 9, 1), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := NewDecoder(tc.events...)
			if err != nil {
				t.Fatal(err)
			}
			h := Header{Type: RecordSample, Misc: tc.misc, Size: uint16(headerSize + len(tc.body))}
			raw := &RawSample{Header: h, Body: tc.body, dec: d}
			got := raw.KernelFrames()
			if got != tc.want {
				t.Errorf("KernelFrames %v, want %v", got, tc.want)
			}
			rec, err := d.Decode(h, tc.body)
			switch {
			case err != nil && !got:
				t.Errorf("Decode refuses it (%v), but KernelFrames says no kernel frames", err)
			case err == nil && decodedKernel(rec.(*Sample)) != got:
				t.Errorf("decoded: %s; KernelFrames %v", Format(rec), got)
			}
		})
	}
}
