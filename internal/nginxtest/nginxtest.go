// Package nginxtest starts Debian's nginx as a WebDAV server for tests of
// the remote cache: PUT stores a file under the server's root (creating
// directories), GET reads it back, as a build farm's plain nginx would.
// Each server has its own configuration, prefix, logs, pid file and
// temporary directories inside the test's temporary directory, listens
// on a free port of 127.0.0.1 only, runs in the foreground as the
// current user (daemon off, no master process) and is killed when the
// test ends. Tests skip when the nginx binary is absent.
package nginxtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"bloop/internal/testenv"
)

// Binary is where Debian installs nginx.
const Binary = "/usr/sbin/nginx"

// Server is a running nginx.
type Server struct {
	URL  string // http://127.0.0.1:port, without a trailing slash
	Root string // the directory PUT writes to and GET reads from
	Dir  string // prefix: configuration, logs, pid file, temporary files

	t    testing.TB
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	stop bool
}

// config is the server's nginx.conf. WebDAV PUT writes the body to a
// temporary file and renames it into place, so a reader never sees a
// partial blob.
const config = `daemon off;
master_process off;
worker_processes 1;
pid {{dir}}/nginx.pid;
error_log {{dir}}/error.log info;
events { worker_connections 256; }
http {
    access_log {{dir}}/access.log;
    client_body_temp_path {{dir}}/tmp/body;
    proxy_temp_path {{dir}}/tmp/proxy;
    fastcgi_temp_path {{dir}}/tmp/fastcgi;
    uwsgi_temp_path {{dir}}/tmp/uwsgi;
    scgi_temp_path {{dir}}/tmp/scgi;
    server {
        listen 127.0.0.1:{{port}};
        root {{root}};
        location / {
            dav_methods PUT DELETE;
            create_full_put_path on;
            dav_access user:rw group:r all:r;
            client_max_body_size 0;
        }
    }
}
`

// Start runs an nginx for the test and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		t.Skipf("nginx not installed: %v", err)
	}
	dir := t.TempDir()
	s := &Server{Dir: dir, Root: filepath.Join(dir, "root"), t: t}
	for _, d := range []string{s.Root, filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The port is free when asked; another process may take it before
	// nginx binds it, so a failed start is tried again on another.
	var lastErr error
	for range 5 {
		port, err := testenv.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if lastErr = s.start(port); lastErr == nil {
			t.Cleanup(s.Stop)
			return s
		}
	}
	t.Fatalf("nginx did not start: %v", lastErr)
	return nil
}

func (s *Server) start(port int) error {
	conf := strings.NewReplacer("{{dir}}", s.Dir, "{{root}}", s.Root, "{{port}}", fmt.Sprint(port)).Replace(config)
	confPath := filepath.Join(s.Dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return err
	}
	stderr, err := os.Create(filepath.Join(s.Dir, "stderr.log"))
	if err != nil {
		return err
	}
	defer stderr.Close()
	// -e: nginx logs to its built-in error log (stderr on Debian) before
	// it reads error_log.
	cmd := exec.Command(Binary, "-p", s.Dir, "-c", confPath, "-e", filepath.Join(s.Dir, "error.log"))
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(s.Dir, "error.log"))
			out, _ := os.ReadFile(stderr.Name())
			return fmt.Errorf("nginx exited: %s%s", out, lastLines(string(log), 5))
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			return fmt.Errorf("nginx does not accept connections on %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.cmd, s.done = cmd, done
	s.URL = "http://" + addr
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Stop kills the server and waits for it: afterwards its port refuses
// connections. Stopping twice is allowed.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop || s.cmd == nil {
		return
	}
	s.stop = true
	s.cmd.Process.Kill()
	<-s.done
}

// Path is the file on the server's disk that holds the resource at rel
// (a path relative to the base URL, such as "cas/<hash>").
func (s *Server) Path(rel string) string {
	return filepath.Join(s.Root, filepath.FromSlash(rel))
}

// AccessLog returns the requests nginx logged so far, one line each.
func (s *Server) AccessLog() []string {
	// nginx logs a request after it has sent the response, so a client
	// can ask before the last line is written: read until the log has
	// not grown for a while (bounded).
	read := func() []byte { b, _ := os.ReadFile(filepath.Join(s.Dir, "access.log")); return b }
	b := read()
	for still, start := 0, time.Now(); still < 3 && time.Since(start) < 2*time.Second; {
		time.Sleep(20 * time.Millisecond)
		if nb := read(); len(nb) != len(b) {
			b, still = nb, 0
		} else {
			still++
		}
	}
	var out []string
	for l := range strings.SplitSeq(string(b), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
