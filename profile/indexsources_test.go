package profile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"bloop/cache"
	"bloop/loader"
	"bloop/pipeline"
)

// servedSource is a Fetcher serving one file for one build-id.
type servedSource struct {
	id          []byte
	path, local string
	asked       int
}

func (s *servedSource) Source(id []byte, path string) (string, error) {
	s.asked++
	if bytes.Equal(id, s.id) && path == s.path {
		return s.local, nil
	}
	return "", errors.New("not served")
}

// TestAnalyzeModuleFetchedSources: a report's analysis of a module puts
// its loops on the lines of a source fetched by the module's build-id
// (its line table's /src/loops.c is not here), as the analysis with the
// source found here does; the cached index is then served without asking
// again.
func TestAnalyzeModuleFetchedSources(t *testing.T) {
	if _, err := os.Stat("/src/loops.c"); err == nil {
		t.Skip("/src/loops.c is on this machine")
	}
	img, err := loader.Open("../testdata/bin/loops-gcc12-O2", loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	local, _ := filepath.Abs("../testdata/src/loops.c")
	mod, _ := pipeline.Analyze(img, pipeline.Options{SourceDirs: []string{filepath.Dir(local)}})
	if mod == nil {
		t.Fatal("no analysis")
	}
	want := encodeIndex(indexModule(mod, img.Name))
	if bytes.Equal(encodeIndex(analyzeModule(nil, img, img.Name, loader.Options{}, nil, nil)), want) {
		t.Fatal("the source changes nothing of loops-gcc12-O2's index: the test proves nothing")
	}
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	served := &servedSource{id: img.BuildID, path: "/src/loops.c", local: local}
	if got := analyzeModule(c, img, img.Name, loader.Options{}, served, nil); !bytes.Equal(encodeIndex(got), want) {
		t.Error("with the fetched source: not the index with the source found here")
	}
	asked := served.asked
	if got := analyzeModule(c, img, img.Name, loader.Options{}, served, nil); !bytes.Equal(encodeIndex(got), want) || served.asked != asked {
		t.Errorf("cached: same index %v, asked again %v", bytes.Equal(encodeIndex(got), want), served.asked != asked)
	}
}
