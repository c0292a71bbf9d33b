package perfevent

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"bloop/fuzzing"
)

// FuzzFile reads any bytes as a perf.data file or stream: Open, Records
// and Skim may refuse them, never panic or run away, and Skim passes
// what Records does but for the samples it does not decode. Seeded with
// the committed recordings and hand-made files and streams.
func FuzzFile(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.data")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	events := twoEvents()
	recs := bytes.Join(someRecords(), nil)
	f.Add(LayoutFile(events, recs, map[int][]byte{FeatCmdline: CmdlineFeature("perf", "record"),
		FeatEventDesc: eventDescFeature(events...), FeatBuildID: buildIDRecord(RecordHeaderBuildID, 7, []byte{1}, "/x")}))
	f.Add(pipeStream(attrRecord(events[0]), attrRecord(events[1]), nameRecord(11, "a"), recs,
		append(rec(RecordHeaderTracingData, 0, w(u32(8), u32(0))), make([]byte, 8)...)))
	errStop := errors.New("enough")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		defer fuzzing.Watchdog("reading perf data", 10*time.Second)()
		pf, err := NewFile(bytes.NewReader(data), int64(len(data)), "fuzz.data")
		if err != nil {
			return
		}
		defer pf.Close()
		read, readErr := formatUpTo(pf, errStop)
		checkSkim(t, pf, errStop)
		// Read in place (Keep maps the file and its records are read
		// where they lie), the same records and the same end.
		path := filepath.Join(dir, "fuzz.data")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		mf, err := Open(path)
		if err != nil {
			t.Fatalf("Open refuses what NewFile read: %v", err)
		}
		defer mf.Close()
		if release, ok := mf.Keep(); ok {
			defer release()
		}
		mapped, mappedErr := formatUpTo(mf, errStop)
		if !slices.Equal(read, mapped) || (readErr == nil) != (mappedErr == nil) {
			t.Fatalf("mapped: %d records (%v), read: %d (%v)", len(mapped), mappedErr, len(read), readErr)
		}
	})
}

// formatUpTo formats every record of f, up to 100000 (then stop).
func formatUpTo(f *File, stop error) ([]string, error) {
	var out []string
	err := f.Records(func(r Record) error {
		out = append(out, Format(r))
		if len(out) > 100000 {
			return stop
		}
		return nil
	})
	return out, err
}

// checkSkim walks f with Records and with Skim: up to the record where
// Records fails, if it does, they must pass the same records, samples
// as their headers and whether they have kernel frames; past it Skim may
// go on (a sample it cannot decode is no error to it).
func checkSkim(t *testing.T, f *File, stop error) {
	full, fullErr := skimFormatUpTo(f.Records, stop)
	skim, skimErr := skimFormatUpTo(f.Skim, stop)
	if len(skim) < len(full) || !slices.Equal(skim[:len(full)], full) {
		t.Fatalf("skim: %d records (%v), full walk: %d (%v)", len(skim), skimErr, len(full), fullErr)
	}
	if (fullErr == nil || fullErr == stop) && (len(skim) != len(full) || skimErr != fullErr) {
		t.Fatalf("skim: %d records (%v), full walk: %d (%v)", len(skim), skimErr, len(full), fullErr)
	}
}

// skimFormatUpTo renders every record of a walk, samples by sampleLine,
// up to 100000 (then stop).
func skimFormatUpTo(walk func(func(Record) error) error, stop error) ([]string, error) {
	var out []string
	err := walk(func(r Record) error {
		l, ok := sampleLine(r)
		if !ok {
			l = Format(r)
		}
		out = append(out, l)
		if len(out) > 100000 {
			return stop
		}
		return nil
	})
	return out, err
}

// FuzzRecord decodes any record body for any attribute: Decode may
// refuse it, never panic, and what it returns lies within the body.
func FuzzRecord(f *testing.F) {
	for _, tc := range decodeTests {
		if len(tc.events) == 1 {
			a := tc.events[0].Attr
			f.Add(a.SampleType, a.ReadFormat, a.BranchSampleType, a.SampleRegsUser, a.SampleRegsIntr, a.Flags, tc.typ, tc.misc, tc.body)
		}
	}
	f.Fuzz(func(t *testing.T, st, rf, bst, regs, intr, flags uint64, typ uint32, misc uint16, body []byte) {
		if len(body) > 1<<16-8 {
			body = body[:1<<16-8]
		}
		d, err := NewDecoder(&Event{Attr: Attr{SampleType: st, ReadFormat: rf, BranchSampleType: bst,
			SampleRegsUser: regs, SampleRegsIntr: intr, Flags: flags}})
		if err != nil {
			t.Fatal(err)
		}
		h := Header{Type: typ, Misc: misc, Size: uint16(8 + len(body))}
		rec, err := d.Decode(h, body)
		if typ == RecordSample {
			checkChain(t, &RawSample{Header: h, Body: body, dec: d}, rec, err)
		}
		if err != nil {
			return
		}
		Format(rec)
		if s, ok := rec.(*Sample); ok {
			for _, part := range [][]byte{s.Read, s.Raw, s.BranchStack, s.Stack, s.Aux} {
				if len(part) > len(body) {
					t.Fatalf("a part of %d bytes from a body of %d", len(part), len(body))
				}
			}
			if 8*(len(s.Callchain)+len(s.Regs)+len(s.IntrRegs)) > len(body) {
				t.Fatalf("%d words from a body of %d bytes", len(s.Callchain)+len(s.Regs)+len(s.IntrRegs), len(body))
			}
		}
	})
}
