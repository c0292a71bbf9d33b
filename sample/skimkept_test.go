package sample

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// skimLines is SkimPerfKept's entries as lines, the header's build-ids
// (a map's order) sorted; keep gets the kept form, if any.
func skimLines(t testing.TB, path string, kept []byte, keep func([]byte)) []string {
	t.Helper()
	var lines []string
	if err := SkimPerfKept(path, kept, keep, func(e Entry) error {
		lines = append(lines, entryLine(e))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	last := len(lines)
	if last > 0 && strings.HasPrefix(lines[last-1], "sample.Parts ") {
		last--
	}
	sortBuildIDs(lines[:last])
	return lines
}

// TestSkimPerfKept: a skim replayed from the kept form of an earlier one
// passes the same entries in the same order as a walk, for every
// committed perf.data file that can be read in parts (the others are
// not kept); a form that cannot be read, or whose parts do not fit the
// file, is walked past.
func TestSkimPerfKept(t *testing.T) {
	files, _ := filepath.Glob("../perfevent/testdata/*.data")
	keptFiles := 0
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var kept []byte
			walked := skimLines(t, path, nil, func(b []byte) { kept = b })
			if plain := skimLines(t, path, nil, nil); !slices.Equal(plain, walked) {
				t.Fatalf("a skim that keeps passed\n%s\nwant SkimPerf's\n%s", strings.Join(walked, "\n"), strings.Join(plain, "\n"))
			}
			hasParts := strings.HasPrefix(walked[len(walked)-1], "sample.Parts ")
			if (kept != nil) != hasParts {
				t.Fatalf("kept form given: %v; the file has parts: %v", kept != nil, hasParts)
			}
			if kept == nil {
				return
			}
			keptFiles++
			if got := skimLines(t, path, kept, nil); !slices.Equal(got, walked) {
				t.Fatalf("replayed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(walked, "\n"))
			}
			for name, bad := range map[string][]byte{
				"truncated":  kept[:len(kept)/2],
				"other":      []byte("not a kept skim"),
				"empty":      {},
				"parts off":  shiftParts(t, kept),
				"bad magic":  append([]byte("x"), kept[1:]...),
				"trailing 1": append(slices.Clip(kept), 1),
			} {
				if got := skimLines(t, path, bad, nil); !slices.Equal(got, walked) {
					t.Errorf("%s form: passed\n%s\nwant the walk's\n%s", name, strings.Join(got, "\n"), strings.Join(walked, "\n"))
				}
			}
		})
	}
	if keptFiles < 2 {
		t.Fatalf("%d committed files kept, want at least 2 (fp, dwarf)", keptFiles)
	}
}

// shiftParts is kept with its last part's end moved a byte back: parts
// that no longer cover the file's data.
func shiftParts(t *testing.T, kept []byte) []byte {
	es, parts, err := decodeKeptParts(kept)
	if err != nil {
		t.Fatal(err)
	}
	parts = slices.Clone(parts)
	parts[len(parts)-1]--
	return encodeKept(es, -1, parts)
}

// decodeKeptParts splits a kept form into its entries (bloop's format)
// and parts, ignoring KernelFrames.
func decodeKeptParts(b []byte) ([]byte, Parts, error) {
	r := bytes.NewReader(bytes.TrimPrefix(b, []byte(keptMagic)))
	var parts Parts
	binary.ReadUvarint(r) // KernelFrames
	n, err := binary.ReadUvarint(r)
	for ; n > 0 && err == nil; n-- {
		var p uint64
		p, err = binary.ReadUvarint(r)
		parts = append(parts, int64(p))
	}
	return b[len(b)-r.Len():], parts, err
}

// TestSkimPerfKeptReplays: what a skim passes comes from the kept form,
// not the file, when the form can be read: a thread name and a
// KernelFrames only the form has are passed, at their places.
func TestSkimPerfKeptReplays(t *testing.T) {
	path := "../perfevent/testdata/fp.data"
	var kept []byte
	walked := skimLines(t, path, nil, func(b []byte) { kept = b })
	_, parts, err := decodeKeptParts(kept)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Comm(Comm{Pid: 7, Tid: 8, Time: 9, Name: "only-kept"})
	w.Lost(3)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	for kernelAt, want := range map[int64][]string{
		-1: {"sample.Comm {Pid:7 Tid:8 Time:9 Name:only-kept}", "sample.Lost 3"},
		0:  {"sample.KernelFrames {}", "sample.Comm {Pid:7 Tid:8 Time:9 Name:only-kept}", "sample.Lost 3"},
		1:  {"sample.Comm {Pid:7 Tid:8 Time:9 Name:only-kept}", "sample.KernelFrames {}", "sample.Lost 3"},
		2:  {"sample.Comm {Pid:7 Tid:8 Time:9 Name:only-kept}", "sample.Lost 3", "sample.KernelFrames {}"},
	} {
		got := skimLines(t, path, encodeKept(buf.Bytes(), kernelAt, parts), nil)
		// Between the head (Meta, maybe the vdso) and the tail (build-ids, parts).
		head := 1
		if strings.HasPrefix(got[1], "sample.Blob ") {
			head = 2
		}
		if mid := got[head : head+len(want)]; !slices.Equal(mid, want) {
			t.Errorf("KernelFrames at %d: replayed\n%s\nwant\n%s", kernelAt, strings.Join(mid, "\n"), strings.Join(want, "\n"))
		}
		if got[len(got)-1] != walked[len(walked)-1] {
			t.Errorf("KernelFrames at %d: last %s, want the parts %s", kernelAt, got[len(got)-1], walked[len(walked)-1])
		}
	}
	// KernelFrames past the entries: a damaged form, walked past.
	if got := skimLines(t, path, encodeKept(buf.Bytes(), 5, parts), nil); !slices.Equal(got, walked) {
		t.Errorf("a form with KernelFrames past its entries replayed\n%s", strings.Join(got, "\n"))
	}
}

// FuzzSkimPerfKept: whatever the kept form, a skim of a committed file
// passes the walk's entries or the form's, without error or panic, and
// ends with parts (the form's only when they cover the file's data).
func FuzzSkimPerfKept(f *testing.F) {
	path := "../perfevent/testdata/fp.data"
	var kept []byte
	walked := skimLines(f, path, nil, func(b []byte) { kept = b })
	f.Add(kept)
	f.Add([]byte(keptMagic))
	f.Add(append([]byte(keptMagic), 1, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := skimLines(t, path, b, nil)
		if !strings.HasPrefix(got[len(got)-1], "sample.Parts ") {
			t.Fatalf("last entry %s, want parts (the walk's: %s)", got[len(got)-1], walked[len(walked)-1])
		}
	})
}
