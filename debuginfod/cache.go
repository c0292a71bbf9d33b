package debuginfod

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The cache's layout is elfutils 0.188's (Debian 12's), so that its
// debuginfod-find, gdb and perf read what bloop fetched and the other
// way round:
//
//	ROOT/BUILDID/debuginfo
//	ROOT/BUILDID/executable
//	ROOT/BUILDID/source##usr##src##a.c   (sourceName)
//	ROOT/cache_miss_s                     (seconds a miss is remembered)
//	ROOT/cache_clean_interval_s, ROOT/max_unused_age_s
//
// A miss is an empty entry: while it is younger than cache_miss_s, no
// server is asked again. bloop never cleans the cache: that is left to
// elfutils' client, which does it by cache_clean_interval_s and
// max_unused_age_s.
const (
	cacheMissFile     = "cache_miss_s"
	cleanIntervalFile = "cache_clean_interval_s"
	maxUnusedAgeFile  = "max_unused_age_s"

	defaultCacheMiss     = 600    // elfutils' default, seconds
	defaultCleanInterval = 86400  // 1 day
	defaultMaxUnusedAge  = 604800 // 1 week
)

// DefaultCachePath is where elfutils' client keeps its cache:
// $DEBUGINFOD_CACHE_PATH, else an existing ~/.debuginfod_client_cache
// (its old default), else $XDG_CACHE_HOME/debuginfod_client, else
// ~/.cache/debuginfod_client.
func DefaultCachePath() string {
	if p := os.Getenv(EnvCachePath); p != "" {
		return p
	}
	home, _ := os.UserHomeDir()
	if home == "" {
		home = "/"
	}
	old := filepath.Join(home, ".debuginfod_client_cache")
	if st, err := os.Stat(old); err == nil && st.IsDir() {
		return old
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "debuginfod_client")
	}
	return filepath.Join(home, ".cache", "debuginfod_client")
}

// entry is one cached file.
type entry struct {
	root   string
	id     string // build-id, lower-case hex
	raw    []byte // build-id
	kind   string
	source string // the source path, for KindSource
}

func (e entry) dir() string { return filepath.Join(e.root, e.id) }

// path is the entry's file in elfutils' layout.
func (e entry) path() string {
	if e.kind == KindSource {
		return filepath.Join(e.dir(), KindSource+escapeSource(e.source))
	}
	return filepath.Join(e.dir(), e.kind)
}

// urlPath is the part of the URL after the server's /buildid.
func (e entry) urlPath() string {
	p := "/" + e.id + "/" + e.kind
	if e.kind == KindSource {
		p += "/" + escapeURLPath(e.source)
	}
	return p
}

// escapeSource is elfutils 0.188's path_escape: "/" becomes "##" and "#"
// becomes "#_", so that no name is another's and none leaves the build-id
// directory. (elfutils 0.192 turned to a hashed name; entries of either
// are only shared with clients of the same rule.)
func escapeSource(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '/':
			b.WriteString("##")
		case '#':
			b.WriteString("#_")
		default:
			b.WriteByte(p[i])
		}
	}
	return b.String()
}

// escapeURLPath is how elfutils puts a source path in the URL: without
// its leading "/", percent-encoded as curl_easy_escape does (all but
// letters, digits and -._~), with the slashes left as they are.
func escapeURLPath(p string) string {
	p = strings.TrimPrefix(p, "/")
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == '/':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

// cacheState is what the cache says of an entry.
type cacheState int

const (
	absent   cacheState = iota
	hit                 // a non-empty file
	negative            // an empty file younger than cache_miss_s
)

// lookup reads the entry's state. An expired miss is removed, as
// elfutils does, so that the servers are asked again.
func (e entry) lookup() cacheState {
	p := e.path()
	st, err := os.Stat(p)
	if err != nil {
		return absent
	}
	if !st.Mode().IsRegular() {
		return absent
	}
	if st.Size() > 0 {
		if f, err := os.Open(p); err == nil {
			f.Close()
			return hit
		} else if errors.Is(err, fs.ErrPermission) {
			// elfutils' old misses were 000-mode files: it removes them.
			os.Remove(p)
		}
		return absent
	}
	miss := readConfig(filepath.Join(e.root, cacheMissFile), defaultCacheMiss)
	if time.Since(st.ModTime()) <= time.Duration(miss)*time.Second {
		return negative
	}
	os.Remove(p)
	return absent
}

// remember records a miss: an empty entry, made only when there is none
// (another process may have just fetched the file).
func (e entry) remember() {
	if os.MkdirAll(e.dir(), 0o700) != nil {
		return
	}
	if f, err := os.OpenFile(e.path(), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
		f.Close()
	}
}

// initCache makes the root and elfutils' configuration files where they
// are missing, with elfutils' defaults; existing ones are left as they are.
func initCache(root string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	for name, def := range map[string]int64{cleanIntervalFile: defaultCleanInterval,
		maxUnusedAgeFile: defaultMaxUnusedAge, cacheMissFile: defaultCacheMiss} {
		f, err := os.OpenFile(filepath.Join(root, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			continue // there already, or the root is read-only: not ours to fix
		}
		f.WriteString(strconv.FormatInt(def, 10))
		f.Close()
	}
	return nil
}

// readConfig reads one of the cache's configuration files: a decimal
// number of seconds (elfutils reads it with fscanf %ld); def when the file
// is missing, empty or unreadable.
func readConfig(path string, def int64) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return def
	}
	n, ok := parseLeadingInt(string(b))
	if !ok {
		return def
	}
	return n
}

// parseLeadingInt reads a decimal integer after optional white space,
// ignoring what follows it, as scanf's %ld does; false when there is
// none or it overflows.
func parseLeadingInt(s string) (int64, bool) {
	s = strings.TrimLeft(s, " \t\r\n\v\f")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n int64
	digits := 0
	for ; digits < len(s) && '0' <= s[digits] && s[digits] <= '9'; digits++ {
		d := int64(s[digits] - '0')
		if n > (1<<63-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	if digits == 0 {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}
