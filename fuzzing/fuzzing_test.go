package fuzzing

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestWatchdog: a stopped watchdog stays quiet; one that runs out panics
// with the operation's name and the stacks (checked in a child process).
func TestWatchdog(t *testing.T) {
	if os.Getenv("WATCHDOG_CHILD") == "1" {
		Watchdog("sleeping", 50*time.Millisecond)
		time.Sleep(5 * time.Second)
		return
	}
	stop := Watchdog("quick", 10*time.Millisecond)
	stop()
	time.Sleep(30 * time.Millisecond)
	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchdog$")
	cmd.Env = append(os.Environ(), "WATCHDOG_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "sleeping hangs") || !strings.Contains(string(out), "goroutine") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestWriteInput: the input replaces what the file held.
func TestWriteInput(t *testing.T) {
	dir := t.TempDir()
	WriteInput(t, dir, "in", []byte("a longer first input"))
	path := WriteInput(t, dir, "in", []byte("short"))
	if b, err := os.ReadFile(path); err != nil || string(b) != "short" {
		t.Fatalf("%s holds %q, %v", path, b, err)
	}
}
