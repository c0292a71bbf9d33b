package debuginfod

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"bloop/internal/debuginfodtest"
	"bloop/internal/testenv"
)

// TestRealServerSharesCache runs elfutils' debuginfod over the corpus's
// binaries: bloop fetches one file and elfutils' debuginfod-find
// another into one cache; then, with the server stopped and its URL
// still named, each finds in the cache what the other fetched.
func TestRealServerSharesCache(t *testing.T) {
	find := testenv.Need(t, "debuginfod-find")
	dir := t.TempDir()
	for _, p := range []string{binA, binB} {
		b, err := os.ReadFile(testenv.Fixture(t, p))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(filepath.Dir(p))+"-"+filepath.Base(p)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	idA, idB := debuginfodtest.BuildID(t, binA), debuginfodtest.BuildID(t, binB)
	srv := debuginfodtest.Start(t, dir, idA, idB)
	cache := t.TempDir()
	elfutils := func(kind, id string) (string, error) {
		cmd := exec.Command(find, kind, id)
		cmd.Env = append(os.Environ(), EnvURLs+"="+srv.URL, EnvCachePath+"="+cache, EnvTimeout+"=2")
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	c, w := client(t, cache, srv.URL)
	pA, err := c.Debuginfo(id(t, binA))
	if err != nil {
		t.Fatal(err)
	}
	pB, err := elfutils("executable", idB)
	if err != nil {
		t.Fatalf("debuginfod-find: %v", err)
	}
	srv.Stop()

	if got, err := elfutils("debuginfo", idA); err != nil || got != pA {
		t.Errorf("debuginfod-find debuginfo %s: %q %v, want bloop's %q", idA, got, err, pA)
	}
	c2, w2 := client(t, cache, srv.URL)
	if got, err := c2.Executable(id(t, binB)); err != nil || got != pB {
		t.Errorf("bloop: executable %s: %q %v, want debuginfod-find's %q", idB, got, err, pB)
	}
	if len(w.Lines())+len(w2.Lines()) > 0 {
		t.Errorf("warnings: %q %q", w.Lines(), w2.Lines())
	}
	// What neither fetched is a miss, and the dead server one warning.
	if _, err := c2.Debuginfo(id(t, binB)); err == nil {
		t.Error("debuginfo of B found with the server stopped")
	}
	if len(w2.Lines()) != 1 {
		t.Errorf("warnings with the server stopped: %q", w2.Lines())
	}
}
