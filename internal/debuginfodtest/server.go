// Package debuginfodtest runs a real elfutils debuginfod for tests: over
// a directory of ELF files, on a free 127.0.0.1 port, stopped when the
// test ends; and a proxy in front of it that misbehaves on demand.
package debuginfodtest

import (
	"debug/elf"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"bloop/internal/testenv"
	"bloop/loader"
)

// Server is a running debuginfod.
type Server struct {
	URL  string // http://127.0.0.1:PORT
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

// Start runs debuginfod -F over dir and waits until it serves the
// debuginfo of every file in ids (build-ids, hex) it was given, which it
// has then scanned. The test fails if it does not within a minute.
func Start(t testing.TB, dir string, ids ...string) *Server {
	t.Helper()
	return startScan(t, "-F", dir, ids)
}

// StartTar is Start over the .tar archives of dir: debuginfod serves
// their ELF files and, for sources, the archives' files at the paths
// the line tables name (as from a distribution's -dbgsym and source
// packages), which need not exist on this machine.
func StartTar(t testing.TB, dir string, ids ...string) *Server {
	t.Helper()
	return startScan(t, "-Z.tar", dir, ids)
}

// startScan starts debuginfod scanning dir as the scan flag says.
func startScan(t testing.TB, scan, dir string, ids []string) *Server {
	t.Helper()
	bin := testenv.Need(t, "debuginfod")
	for attempt := 0; ; attempt++ {
		s, err := start(t, bin, scan, dir)
		if err == nil {
			err = s.wait(ids)
		}
		if err == nil {
			t.Cleanup(s.Stop)
			return s
		}
		if s != nil {
			s.Stop()
		}
		if attempt == 2 {
			log := ""
			if s != nil {
				b, _ := os.ReadFile(s.log)
				log = string(b)
			}
			t.Fatalf("debuginfod did not start: %v\n%s", err, log)
		}
	}
}

func start(t testing.TB, bin, scan, dir string) (*Server, error) {
	port, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	tmp := t.TempDir()
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), done: make(chan struct{}),
		log: filepath.Join(tmp, "debuginfod.log")}
	logf, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	// -t0 -g0: scan once, no grooming; -c1: one scanning thread on a
	// shared machine.
	s.cmd = exec.Command(bin, scan, "-p", fmt.Sprint(port), "-d", filepath.Join(tmp, "db.sqlite"),
		"-t", "0", "-g", "0", "-c", "1", dir)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	dieWithParent(s.cmd)
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() { s.cmd.Wait(); logf.Close(); close(s.done) }()
	return s, nil
}

// wait polls until each id's debuginfo is served.
func (s *Server) wait(ids []string) error {
	deadline := time.Now().Add(time.Minute)
	c := &http.Client{Timeout: 5 * time.Second}
	pending := append([]string{"metrics"}, ids...)
	for len(pending) > 0 {
		u := s.URL + "/metrics"
		if pending[0] != "metrics" {
			u = s.URL + "/buildid/" + pending[0] + "/debuginfo"
		}
		resp, err := c.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				pending = pending[1:]
				continue
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("debuginfod exited")
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not served after a minute (last: %v)", u, err)
		}
	}
	return nil
}

// Stop ends the server and waits for it; its port is then dead.
func (s *Server) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// DeadURL is a URL of 127.0.0.1 on which nothing listens.
func DeadURL(t testing.TB) string {
	t.Helper()
	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

// BuildID is the hex build-id of the ELF file path.
func BuildID(t testing.TB, path string) string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id := loader.BuildID(f)
	if id == nil {
		t.Fatalf("%s: no build-id note", path)
	}
	return hex.EncodeToString(id)
}
