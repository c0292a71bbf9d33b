package perfevent

import (
	"bytes"
	"encoding/gob"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// recordsOf returns every record of f, encoded, and whether each one's
// bytes were delivered from the kept mapping.
func recordsOf(t *testing.T, f *File) ([][]byte, int) {
	t.Helper()
	var out [][]byte
	inFile := 0
	err := f.Records(func(r Record) error {
		var b bytes.Buffer
		if err := gob.NewEncoder(&b).Encode(r); err != nil {
			t.Fatalf("encoding %T: %v", r, err)
		}
		out = append(out, b.Bytes())
		if f.InFile() {
			inFile++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, inFile
}

// TestMappedSameRecords reads each committed file kept (Open and Keep
// map it, pages given back behind the reading every few records) and
// through windows of 300 bytes (NewFile): the records must be the same,
// and a kept file's records are marked as lying in its mapping, but for
// the decompressed ones.
func TestMappedSameRecords(t *testing.T) {
	oldDrop, oldWin := dropWindow, windowBytes
	dropWindow, windowBytes = 4096, 300 // windows that end mid-record
	defer func() { dropWindow, windowBytes = oldDrop, oldWin }()
	for _, c := range committed {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join("testdata", c.name+".data")
			mf, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			release, ok := mf.Keep()
			if !ok {
				if runtime.GOOS == "linux" {
					t.Fatal("a file Open opened not kept")
				}
				t.Skip("this system does not map files")
			}
			got, inFile := recordsOf(t, mf)
			mf.Close()
			defer release()
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			rf, err := NewFile(bytes.NewReader(b), int64(len(b)), path)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := recordsOf(t, rf)
			if len(got) != len(want) {
				t.Fatalf("%d records mapped, %d read", len(got), len(want))
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("record %d differs mapped and read", i)
				}
			}
			compressed := mf.Features.Compression != nil
			if compressed == (inFile == len(got)) || inFile == 0 && !compressed {
				t.Errorf("%d of %d records in the mapping (compressed: %v)", inFile, len(got), compressed)
			}
		})
	}
}
