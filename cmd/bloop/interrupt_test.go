package main

import (
	"bloop/internal/testenv"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWriteThroughSymlink: -o LINK replaces the file the link points to
// and keeps the link.
func TestWriteThroughSymlink(t *testing.T) {
	if _, err := os.Stat(example); err != nil {
		t.Fatal("testdata binary missing")
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "real"), 0o755)
	target := filepath.Join(dir, "real", "out.hpcstruct")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.hpcstruct")
	if err := os.Symlink("real/out.hpcstruct", link); err != nil {
		t.Skip(err)
	}
	dangling := filepath.Join(dir, "dangling.hpcstruct")
	os.Symlink("real/new.hpcstruct", dangling)
	for _, c := range []struct{ link, target string }{{link, target}, {dangling, filepath.Join(dir, "real", "new.hpcstruct")}} {
		if code := runStruct([]string{"-q", "--nocache", "-o", c.link, example}); code != 0 {
			t.Fatalf("exit %d", code)
		}
		if st, err := os.Lstat(c.link); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symbolic link", c.link)
		}
		if b, _ := os.ReadFile(c.target); !strings.Contains(string(b), "<LM ") {
			t.Errorf("%s was not written through the link", c.target)
		}
	}
}

// TestInterruptRemovesTemp runs bloop struct as a child process (this
// test binary, told by BLOOP_TEST_MAIN to act as bloop), interrupts it
// while it writes, and checks the exit status and that no temporary file
// is left.
func TestInterruptRemovesTemp(t *testing.T) {
	big := "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30"
	testenv.NeedFile(t, big, "libstdc++6-12-dbg")

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "struct", "--nocache", "-j1", "-o", filepath.Join(dir, "out.hpcstruct"), big)
		cmd.Env = append(os.Environ(), "BLOOP_TEST_MAIN=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Interrupt once the temporary file exists: the write phase.
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if m, _ := filepath.Glob(filepath.Join(dir, ".out.hpcstruct.tmp*")); len(m) > 0 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
			t.Errorf("%v: %v, want exit status %d", sig, err, 128+int(sig))
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			t.Errorf("%v: %s left behind", sig, e.Name())
		}
	}
}
