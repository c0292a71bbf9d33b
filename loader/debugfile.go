package loader

import (
	"bytes"
	"debug/elf"
	"encoding/hex"
	"os"
	"path/filepath"
)

// defaultDebugRoot is where distributions install -dbg/-dbgsym packages.
const defaultDebugRoot = "/usr/lib/debug"

// Where a separate debug file came from (Image.DebugSource).
const (
	DebugLocal      = "local"      // next to the binary or under a debug root
	DebugDebuginfod = "debuginfod" // fetched by build-id (Options.Fetcher)
)

// DebugFetcher fetches the separate debug file of the ELF file whose
// build-id is given, from elsewhere than this machine's files (package
// debuginfod's Client); it returns the fetched file's path. Loading asks
// it only when no local debug file is found.
type DebugFetcher interface {
	Debuginfo(buildID []byte) (string, error)
}

// findDebugFile locates a separate debug file as gdb does: on this
// machine (findLocalDebugFile), else from opt.Fetcher by build-id, last
// as gdb asks debuginfod last. from says which (DebugLocal or
// DebugDebuginfod).
func findDebugFile(path string, f *elf.File, opt Options) (p, from string) {
	if p := findLocalDebugFile(path, f, opt.DebugDirs); p != "" {
		return p, DebugLocal
	}
	if opt.Fetcher == nil {
		return "", ""
	}
	id := buildID(f)
	if len(id) == 0 {
		return "", ""
	}
	// A miss is the fetcher's to report (once per run); loading goes on
	// as without it.
	if p, err := opt.Fetcher.Debuginfo(id); err == nil && usable(p, path) {
		return p, DebugDebuginfod
	}
	return "", ""
}

// findLocalDebugFile locates a separate debug file the way gdb does: by build-id
// under each debug root (.build-id/xx/rest.debug), then by .gnu_debuglink next
// to the binary, in its .debug/ directory, and under each root + the binary's
// directory. Extra roots from --debug-dir are searched first. A binary in
// perf's build-id cache (a file named elf) has its debug file beside it,
// named debug, when perf found one at the recording.
func findLocalDebugFile(path string, f *elf.File, extra []string) string {
	roots := append(append([]string{}, extra...), defaultDebugRoot)
	if id := buildID(f); len(id) >= 2 {
		h := hex.EncodeToString(id)
		for _, r := range roots {
			if p := filepath.Join(r, ".build-id", h[:2], h[2:]+".debug"); usable(p, path) {
				return p
			}
		}
	}
	if filepath.Base(path) == "elf" {
		if p := filepath.Join(filepath.Dir(path), "debug"); usable(p, path) {
			return p
		}
	}
	if link := debugLink(f); link != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		dir := filepath.Dir(abs)
		cands := []string{filepath.Join(dir, link), filepath.Join(dir, ".debug", link)}
		for _, r := range roots {
			cands = append(cands, filepath.Join(r, dir, link), filepath.Join(r, link))
		}
		for _, p := range cands {
			if usable(p, path) {
				return p
			}
		}
	}
	return ""
}

// usable reports whether p exists, is a regular file and is not the binary itself.
func usable(p, self string) bool {
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	if s2, err := os.Stat(self); err == nil && os.SameFile(st, s2) {
		return false
	}
	return true
}

// buildID returns the GNU build-id note's descriptor, or nil: from the
// note sections, else (a file without section headers, as some
// debuginfod servers send) from the note segments.
func buildID(f *elf.File) []byte {
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		if id := scanNotes(data, f.ByteOrder.Uint32); id != nil {
			return id
		}
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE || p.Filesz > 1<<20 {
			continue
		}
		data := make([]byte, p.Filesz)
		if _, err := p.ReadAt(data, 0); err != nil {
			continue
		}
		if id := scanNotes(data, f.ByteOrder.Uint32); id != nil {
			return id
		}
	}
	return nil
}

// scanNotes finds NT_GNU_BUILD_ID (3, name "GNU") among notes.
func scanNotes(data []byte, u32 func([]byte) uint32) []byte {
	for len(data) >= 12 {
		nsz, dsz, typ := uint64(u32(data)), uint64(u32(data[4:])), u32(data[8:])
		data = data[12:]
		na, da := (nsz+3)&^3, (dsz+3)&^3
		if na+da > uint64(len(data)) {
			return nil
		}
		if typ == 3 && bytes.Equal(bytes.TrimRight(data[:nsz], "\x00"), []byte("GNU")) {
			return data[na : na+dsz]
		}
		data = data[na+da:]
	}
	return nil
}

// debugLink returns the file name stored in .gnu_debuglink, or "".
func debugLink(f *elf.File) string {
	s := f.Section(".gnu_debuglink")
	if s == nil {
		return ""
	}
	data, err := s.Data()
	if err != nil {
		return ""
	}
	if i := bytes.IndexByte(data, 0); i > 0 {
		return filepath.Base(string(data[:i]))
	}
	return ""
}

// DebugFileOf returns the separate debug file on this machine that Open
// would read for path ("" when the binary has its own DWARF or none is
// found), reading only the ELF headers.
func DebugFileOf(path string, extra []string) (p string, err error) {
	p, _, err = DebugFileFor(path, Options{DebugDirs: extra})
	return p, err
}

// DebugFileFor returns the separate debug file Open would read for path
// under opt, and where it came from (DebugLocal, DebugDebuginfod); ""
// when the binary has its own DWARF or none is found. It reads only the
// ELF headers (and fetches what Open would fetch, which Open then finds
// in the fetcher's cache): a structure cache keys on that file's content
// too.
func DebugFileFor(path string, opt Options) (p, from string, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, from, err = "", "", errorf(path, "malformed ELF (%v)", r)
		}
	}()
	f, err := elf.Open(path)
	if err != nil {
		return "", "", errorf(path, "bad ELF: %v", err)
	}
	defer f.Close()
	if hasDWARF(f) {
		return "", "", nil
	}
	p, from = findDebugFile(path, f, opt)
	return p, from, nil
}

// BuildID returns the file's GNU build-id (its .note.gnu.build-id), or nil.
func BuildID(f *elf.File) []byte { return buildID(f) }
