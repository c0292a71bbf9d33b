package perfevent

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkChain requires of a sample record that RawSample.Chain, when it
// reads the record in place, read what Decode decodes (rec, err), and
// that Decode then succeeded.
func checkChain(t *testing.T, raw *RawSample, rec Record, err error) bool {
	t.Helper()
	var f ChainFields
	if !raw.Chain(&f) {
		return false
	}
	if err != nil {
		t.Fatalf("Chain read a sample that Decode refuses: %v", err)
	}
	s := rec.(*Sample)
	chain := make([]byte, 8*len(s.Callchain))
	for i, w := range s.Callchain {
		binary.LittleEndian.PutUint64(chain[8*i:], w)
	}
	period := s.Period
	if !f.HasPeriod {
		period = 0
	}
	if f.Event != s.Event || f.Pid != s.Pid || f.Tid != s.Tid || f.Time != s.Time || f.IP != s.IP || f.Period != period ||
		!bytes.Equal(f.Callchain, chain) || f.HasChain != (s.Event.Attr.SampleType&SampleCallchain != 0) {
		t.Fatalf("Chain read %+v, Decode %+v", f, s)
	}
	return true
}

// TestRawChainCommitted reads every sample of the committed files in
// place and decoded: the frame-pointer and IP-only files' are all read
// in place, the same as decoded; those with stack copies never are.
func TestRawChainCommitted(t *testing.T) {
	for _, tc := range []struct {
		file    string
		inPlace bool
	}{
		{"plain.data", true},
		{"fp.data", true},
		{"pipe.data", true},
		{"zstd.data", true},
		{"dwarf.data", false},
		{"pipe-zstd-dwarf.data", false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := Open(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			n, in := 0, 0
			err = f.Skim(func(r Record) error {
				raw, ok := r.(*RawSample)
				if !ok {
					return nil
				}
				n++
				rec, err := raw.Decode()
				var got Record
				if err == nil {
					got = rec
				}
				if checkChain(t, raw, got, err) {
					in++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Fatal("no samples")
			}
			if want := map[bool]int{true: n, false: 0}[tc.inPlace]; in != want {
				t.Errorf("%d of %d samples read in place, want %d", in, n, want)
			}
		})
	}
}

// TestRawDecodeError: a sample that Decode refuses, decoded by the
// function Skim calls, ends the walk with the error Records gives, which
// names the file and the record; Chain does not read it.
func TestRawDecodeError(t *testing.T) {
	b, err := os.ReadFile("testdata/fp.data")
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFile(bytes.NewReader(b), int64(len(b)), "fp.data")
	if err != nil {
		t.Fatal(err)
	}
	// The first sample's callchain is made longer than the record.
	st := f.Events[0].Attr.SampleType
	at := int(binary.LittleEndian.Uint64(b[40:]))
	for binary.LittleEndian.Uint32(b[at:]) != RecordSample {
		at += int(binary.LittleEndian.Uint16(b[at+6:]))
	}
	binary.LittleEndian.PutUint64(b[at+8+8*bits.OnesCount64(st&beforeRead):], 1<<40)
	open := func() *File {
		f, err := NewFile(bytes.NewReader(b), int64(len(b)), "fp.data")
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	want := open().Records(func(Record) error { return nil })
	if want == nil || !strings.Contains(want.Error(), "fp.data: record at offset") {
		t.Fatalf("Records: %v, want an error naming the file and record", want)
	}
	got := open().Skim(func(r Record) error {
		if raw, ok := r.(*RawSample); ok {
			var f ChainFields
			if raw.Chain(&f) {
				t.Error("Chain read a callchain longer than its record")
			}
			_, err := raw.Decode()
			return err
		}
		return nil
	})
	if got == nil || got.Error() != want.Error() || !errors.Is(got, ErrFormat) {
		t.Errorf("Skim, decoding: %v, want %v", got, want)
	}
}
