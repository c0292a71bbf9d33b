package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the drawing goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestBar(t *testing.T) {
	saved := Delay
	defer func() { Delay = saved }()
	Delay = 0
	var buf syncBuffer
	b := New(&buf, "bloop: prog", true)
	b.Phase("analysing procedures", 10)
	b.Set(5, 10)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(buf.String(), "5/10") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	b.Close()
	out := buf.String()
	if !strings.Contains(out, "\r\033[Kbloop: prog: analysing procedures 5/10 (50%)") {
		t.Errorf("progress line not drawn: %q", out)
	}
	if !strings.HasSuffix(out, "\r\033[K") {
		t.Errorf("the line is not erased at the end: %q", out)
	}
}

// TestQuietAndShortRuns: a disabled bar is nil and draws nothing; a run
// shorter than the delay draws nothing either.
func TestQuietAndShortRuns(t *testing.T) {
	var buf syncBuffer
	b := New(&buf, "p", false)
	if b != nil {
		t.Fatal("disabled bar is not nil")
	}
	b.Phase("x", 1) // nil-safe
	b.Set(1, 1)
	b.Close()
	b = New(&buf, "p", true)
	b.Phase("x", 3)
	b.Close()
	if buf.String() != "" {
		t.Errorf("drew %q", buf.String())
	}
}
