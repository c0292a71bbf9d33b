package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/progress"

	"golang.org/x/sys/unix"
)

// openPTY returns a pseudo-terminal's two ends.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pts: %v", err)
	}
	return m, s
}

// onTerminal runs struct with stderr on a terminal and returns what the
// terminal showed.
func onTerminal(t *testing.T, args ...string) (int, string) {
	m, s := openPTY(t)
	defer m.Close()
	got := make(chan string)
	go func() {
		b, _ := io.ReadAll(m) // ends with EIO once the slave is closed
		got <- string(b)
	}()
	saved := os.Stderr
	os.Stderr = s
	code := runStruct(args)
	os.Stderr = saved
	s.Close()
	return code, <-got
}

// TestStructSaysWhereOnTerminal: on a terminal, struct ends with one line
// naming the file it wrote; -q and non-terminals get nothing.
func TestStructSaysWhereOnTerminal(t *testing.T) {
	if _, err := os.Stat(example); err != nil {
		t.Fatal("testdata binary missing")
	}
	dest := filepath.Join(t.TempDir(), "x.hpcstruct")
	code, tty := onTerminal(t, "--nocache", "-o", dest, example)
	if code != 0 || !strings.Contains(tty, "bloop: wrote "+dest) {
		t.Errorf("terminal: exit %d, showed %q", code, tty)
	}
	if code, tty = onTerminal(t, "-q", "--nocache", "-o", dest, example); code != 0 || tty != "" {
		t.Errorf("-q on a terminal: exit %d, showed %q", code, tty)
	}
	if code, _, errOut := captured(t, runStruct, "--nocache", "-o", dest, example); code != 0 || errOut != "" {
		t.Errorf("not a terminal: exit %d, stderr %q", code, errOut)
	}
}

// TestProgressOnTerminal: on a terminal, a run longer than progress.Delay
// (here 0) shows the phase and procedures done out of the total, and
// erases the line at the end; -q shows none.
func TestProgressOnTerminal(t *testing.T) {
	if _, err := os.Stat(example); err != nil {
		t.Fatal("testdata binary missing")
	}
	saved := progress.Delay
	progress.Delay = 0
	defer func() { progress.Delay = saved }()
	dest := filepath.Join(t.TempDir(), "x.hpcstruct")
	// Big enough to take a few redraws: libstdc++'s debug build when
	// present, else the example.
	bin := example
	if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30"); err == nil {
		bin = "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30"
	}
	code, tty := onTerminal(t, "--nocache", "-o", dest, bin)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if bin != example && !strings.Contains(tty, "procedures ") {
		t.Errorf("no progress line on the terminal: %q", tty)
	}
	if strings.Contains(tty, "\033[K") && !strings.Contains(tty, "\r\033[Kbloop: wrote") {
		t.Errorf("the progress line is not erased before the last line: %q", tty)
	}
	if _, tty = onTerminal(t, "-q", "--nocache", "-o", dest, bin); tty != "" {
		t.Errorf("-q: the terminal showed %q", tty)
	}
}

// TestBatchProgressOnTerminal: a batch on a terminal counts files done out
// of the total and failures, and ends with its summary line.
func TestBatchProgressOnTerminal(t *testing.T) {
	saved := progress.Delay
	progress.Delay = 0
	defer func() { progress.Delay = saved }()
	junk := filepath.Join(t.TempDir(), "junk")
	os.WriteFile(junk, []byte("\x7fELF junk"), 0o644)
	// Sparse and large, so that it is taken (and refused) first: the
	// line then shows a failure while the others run.
	os.Truncate(junk, 1<<30)
	inputs := []string{junk, example}
	big := "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30"
	if _, err := os.Stat(big); err == nil {
		inputs = append(inputs, big)
	}
	code, tty := onTerminal(t, append([]string{"--nocache", "-j1", "-o", t.TempDir()}, inputs...)...)
	if code != 1 {
		t.Errorf("exit %d with a refused input, want 1", code)
	}
	if len(inputs) == 3 && !strings.Contains(tty, "files 1/3, 1 failed") {
		t.Errorf("no progress line counting files and failures: %q", tty)
	}
	if !strings.Contains(tty, fmt.Sprintf("bloop: %d inputs: %d written, 0 from the cache, 1 refused, 0 failed", len(inputs), len(inputs)-1)) {
		t.Errorf("no summary line: %q", tty)
	}
}
