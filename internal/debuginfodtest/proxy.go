package debuginfodtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
)

// Faults a Proxy plays.
const (
	Pass      = ""          // forward to the server
	NotFound  = "404"       // 404 Not Found
	Error     = "500"       // 500 Internal Server Error
	Truncate  = "truncate"  // the server's answer cut in half, its full Content-Length sent
	Other     = "other"     // another ELF file (Proxy.OtherFile), 200
	Garbage   = "garbage"   // 200 with bytes that are not ELF
	Stall     = "stall"     // no answer until the client gives up
	StallBody = "stallbody" // the head and a few bytes, then nothing
)

// Proxy is an HTTP server in front of a debuginfod that answers with a
// fault instead of the server's answer.
type Proxy struct {
	URL       string
	Fault     string
	OtherFile string // the file Other serves
	Requests  atomic.Int64
	target    string
}

// NewProxy starts a proxy to target, closed when the test ends.
func NewProxy(t testing.TB, target, fault string) *Proxy {
	p := &Proxy{Fault: fault, target: target}
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	p.URL = srv.URL
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return p
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	p.Requests.Add(1)
	switch p.Fault {
	case NotFound:
		http.Error(w, "not found", http.StatusNotFound)
		return
	case Error:
		http.Error(w, "broken", http.StatusInternalServerError)
		return
	case Stall:
		<-r.Context().Done()
		return
	case Garbage:
		w.Header().Set("Content-Length", "4096")
		w.Write(make([]byte, 4096))
		return
	case Other:
		b, err := os.ReadFile(p.OtherFile)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Write(b)
		return
	}
	resp, err := http.Get(p.target + r.URL.RequestURI())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if resp.StatusCode != http.StatusOK || p.Fault == Pass {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(resp.StatusCode)
		w.Write(body)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	switch p.Fault {
	case Truncate:
		w.Write(body[:len(body)/2])
		// Returning with fewer bytes than announced makes the server
		// close the connection: the client sees a short body.
	case StallBody:
		w.Write(body[:64])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}
