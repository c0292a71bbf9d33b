package nginxtest

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"testing"
)

// TestPutGet: the server stores a PUT under its root, creating the
// directories, serves it back, and refuses connections once stopped.
func TestPutGet(t *testing.T) {
	s := Start(t)
	req, _ := http.NewRequest(http.MethodPut, s.URL+"/a/b/c", bytes.NewReader([]byte("blob")))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT: %s", resp.Status)
	}
	if b, err := os.ReadFile(s.Path("a/b/c")); err != nil || string(b) != "blob" {
		t.Fatalf("on disk: %q %v", b, err)
	}
	resp, err = http.Get(s.URL + "/a/b/c")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(b) != "blob" {
		t.Fatalf("GET: %s %q", resp.Status, b)
	}
	if resp, err := http.Get(s.URL + "/missing"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET of a missing file: %v %v", resp, err)
	}
	if n := len(s.AccessLog()); n != 3 {
		t.Errorf("%d requests logged, want 3", n)
	}
	s.Stop()
	if _, err := http.Get(s.URL + "/a/b/c"); err == nil {
		t.Error("a stopped server answers")
	}
	s.Stop()
}
