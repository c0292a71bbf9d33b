package source

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
)

// copies is a Fetcher over a map of (build-id, path) -> local copy.
type copies struct {
	files map[string]string
	asked []string
}

func (c *copies) Source(id []byte, path string) (string, error) {
	c.asked = append(c.asked, string(id)+" "+path)
	if p, ok := c.files[string(id)+" "+path]; ok {
		return p, nil
	}
	return "", errors.New("not served")
}

// TestFinderFetch: a file on neither disk nor Dirs is asked of the
// Fetcher by the module's build-id, scanned in the language of the line
// table's name (the copy's name ends otherwise), and recorded as read;
// a file found here is not asked for, nor a relative one.
func TestFinderFetch(t *testing.T) {
	src, err := os.ReadFile("../testdata/src/loops.c")
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "source##nowhere##loops.c#_x")
	os.WriteFile(copyPath, src, 0o644)
	fetcher := &copies{files: map[string]string{"id /nowhere/loops.c": copyPath}}
	f := &Finder{Fetcher: fetcher}
	f.Module([]byte("id"))
	f.Module([]byte("other")) // the first module's stays
	if got, want := f.LoopLines("/nowhere/loops.c"), scan("../testdata/src/loops.c").lines; !reflect.DeepEqual(got, want) {
		t.Errorf("fetched loops.c: %v, want %v", got, want)
	}
	if f.LoopLines("/nowhere/other.c") != nil || f.LoopLines("relative.c") != nil {
		t.Error("loops in a file nobody serves")
	}
	f.LoopLines("../testdata/src/loops.c")
	if want := []string{"id /nowhere/loops.c", "id /nowhere/other.c"}; !reflect.DeepEqual(fetcher.asked, want) {
		t.Errorf("asked %q, want %q", fetcher.asked, want)
	}
	want := []string{"../testdata/src/loops.c", "/nowhere/loops.c", "/nowhere/other.c", copyPath, "relative.c"}
	sort.Strings(want)
	if got := f.Probed(); !reflect.DeepEqual(got, want) {
		t.Errorf("probed %q, want %q", got, want)
	}
}
