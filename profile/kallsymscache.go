package profile

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"unsafe"

	"bloop/cache"
)

// Reading /proc/kallsyms (5 MB the kernel writes out symbol by symbol)
// and parsing it cost a warm report more than anything else of its own
// setup, so the parsed table is kept in the report's cache. It is the
// same table while the machine is not rebooted (the boot's id), runs the
// same kernel, and has the same modules at the same addresses (a module
// loaded, unloaded or moved changes /proc/modules' name, size and
// address columns). Symbols that come and go without a module (BPF
// programs, ftrace trampolines) are those of the table's first reading,
// as they are those of the report's reading and not the recording's
// anyway.
//
// The entry holds addresses relative to the first text symbol kallsyms
// lists, whose address is read from the head of /proc/kallsyms each
// time (a few lines): a cache directory readable by others then does not
// give away where the kernel was loaded (KASLR).

// The files that identify the running kernel's symbols.
var (
	bootIDFile  = "/proc/sys/kernel/random/boot_id"
	modulesFile = "/proc/modules"
)

const (
	kallsymsKind  = "kernel symbols 3"
	kallsymsMagic = "bloop kernel symbols 3\n"
	// A copy of kallsyms (perf's, in its build-id cache) is kept by the
	// copy's identity: read and parsed, 5 MB were 10 ms of CPU and 11 MB
	// of garbage in each report of a recording with kernel frames, where
	// the stored table, mapped where it lies, takes under 1 ms. Its
	// addresses are kept relative to the copy's first text symbol, as
	// the running kernel's are.
	kallsymsCopyKind = "kernel symbols copy 2"
)

// kallsymsKey is the cache key of the running kernel's symbols, "" when
// the boot cannot be identified (nothing kept then).
func kallsymsKey() string {
	boot, err := os.ReadFile(bootIDFile)
	if err != nil || len(bytes.TrimSpace(boot)) == 0 {
		return ""
	}
	rel, err := os.ReadFile(releaseFile)
	if err != nil {
		return ""
	}
	// No /proc/modules (a kernel without modules) is a state of its own.
	mods, err := os.ReadFile(modulesFile)
	if err != nil && !os.IsNotExist(err) {
		return ""
	}
	return cache.Key(kallsymsKind, string(bytes.TrimSpace(boot)), string(bytes.TrimSpace(rel)), modulesDigest(mods))
}

// modulesDigest hashes /proc/modules' name, size and address columns:
// the reference counts and states change with use, not the symbols.
func modulesDigest(b []byte) string {
	h := sha256.New()
	for _, line := range bytes.Split(b, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) < 6 {
			if len(f) > 0 {
				fmt.Fprintf(h, "%q\n", line)
			}
			continue
		}
		fmt.Fprintf(h, "%s %s %s\n", f[0], f[1], f[5])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// kallsymsAnchor returns the first text symbol file (kallsyms or a
// copy of it) lists, reading only its first lines; ok is false when there
// is none with an address in them.
func kallsymsAnchor(file string) (name string, addr uint64, ok bool) {
	f, err := os.Open(file)
	if err != nil {
		return "", 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 0; n < 64 && sc.Scan(); n++ {
		if s, a, ok := textSymbol(sc.Text()); ok {
			return s, a, true
		}
	}
	return "", 0, false
}

// textSymbol parses a kallsyms line of a text symbol with an address;
// the name is a part of line.
func textSymbol(line string) (string, uint64, bool) {
	// The kernel writes every line as "%px %c %s", a 64-bit address in 16
	// digits: read straight (half the parsing), others field by field.
	if len(line) > 19 && line[16] == ' ' && line[18] == ' ' && !isBlank(line[19]) {
		if a, ok := hex16(line[:16]); ok {
			if !isText(line[17]) || a == 0 {
				return "", 0, false
			}
			name, _ := field(line[19:])
			return name, a, true
		}
	}
	addr, rest := field(line)
	typ, rest := field(rest)
	name, _ := field(rest)
	if name == "" || len(typ) != 1 || !isText(typ[0]) {
		return "", 0, false
	}
	a, err := strconv.ParseUint(addr, 16, 64)
	if err != nil || a == 0 {
		return "", 0, false
	}
	return name, a, true
}

// isText tells a symbol type of text: local, global or weak.
func isText(typ byte) bool { return typ == 't' || typ == 'T' || typ == 'w' || typ == 'W' }

// hex16 reads 16 hexadecimal digits.
func hex16(s string) (uint64, bool) {
	var a uint64
	for i := range 16 {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		a = a<<4 | uint64(c)
	}
	return a, true
}

// field splits s's first field, separated by blanks, from the rest.
func field(s string) (string, string) {
	i := 0
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	j := i
	for j < len(s) && !isBlank(s[j]) {
		j++
	}
	return s[i:j], s[j:]
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }

// readKallsyms reads the kernel's symbols file into a buffer of a few
// MiB at once: the kernel writes a page a read whatever the buffer, and
// os.ReadFile's growing buffer of a file whose size reads as 0 was half
// the time (93 ms against 39 ms for 5.4 MB).
func readKallsyms() ([]byte, error) {
	f, err := os.Open(kallsymsFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 0, 8<<20)
	for {
		b = slices.Grow(b, 1)
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// encodeKallsyms stores ks as its table is held (symList), the
// addresses less the anchor's: the anchor's name (a length and the
// bytes), the number of symbols, of aliases and the length of the text
// (8 bytes each), then the symbols' address words and name references,
// the aliases' and the text (the names only).
func encodeKallsyms(ks *kernelSyms, anchor string, at uint64) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32([]byte(kallsymsMagic), uint32(len(anchor)))
	b = append(b, anchor...)
	size := 0
	for _, l := range []*symList{&ks.syms, &ks.aliases} {
		for i := range l.len() {
			size += len(l.name(i))
		}
	}
	b = le.AppendUint64(le.AppendUint64(le.AppendUint64(b, uint64(ks.syms.len())), uint64(ks.aliases.len())), uint64(size))
	text := make([]byte, 0, size)
	for _, l := range []*symList{&ks.syms, &ks.aliases} {
		for i := range l.len() {
			b = le.AppendUint64(b, l.addr(i)-at)
		}
		for i := range l.len() {
			name := l.name(i)
			b = le.AppendUint32(le.AppendUint32(b, uint32(len(text))), uint32(len(name)))
			text = append(text, name...)
		}
	}
	return append(b, text...)
}

// decodeKallsyms takes a stored table whose anchor is at address at now,
// read in place (b must not change afterwards); an error when it is
// damaged or has another anchor.
func decodeKallsyms(b []byte, anchor string, at uint64) (*kernelSyms, error) {
	le := binary.LittleEndian
	rest, ok := bytes.CutPrefix(b, []byte(kallsymsMagic))
	if !ok {
		return nil, fmt.Errorf("not stored kernel symbols")
	}
	if len(rest) < 4 || uint64(len(rest)-4) < uint64(le.Uint32(rest)) {
		return nil, fmt.Errorf("stored kernel symbols: truncated")
	}
	n := le.Uint32(rest)
	if string(rest[4:4+n]) != anchor {
		return nil, fmt.Errorf("stored kernel symbols of another anchor")
	}
	rest = rest[4+n:]
	if len(rest) < 24 {
		return nil, fmt.Errorf("stored kernel symbols: truncated")
	}
	nsyms, naliases, size := le.Uint64(rest), le.Uint64(rest[8:]), le.Uint64(rest[16:])
	rest = rest[24:]
	if nsyms > uint64(len(rest))/16 || naliases > uint64(len(rest))/16 || size > math.MaxUint32 ||
		16*(nsyms+naliases)+size != uint64(len(rest)) {
		return nil, fmt.Errorf("stored kernel symbols: %d bytes for %d symbols, %d aliases and %d of names", len(rest), nsyms, naliases, size)
	}
	text := unsafe.String(unsafe.SliceData(rest[16*(nsyms+naliases):]), int(size))
	ks := &kernelSyms{}
	for _, t := range []struct {
		l *symList
		n uint64
	}{{&ks.syms, nsyms}, {&ks.aliases, naliases}} {
		*t.l = symList{base: at, addrs: rest[:8*t.n], refs: rest[8*t.n : 16*t.n], text: text}
		rest = rest[16*t.n:]
		for i := range int(t.n) {
			r := t.l.refs[8*i:]
			if uint64(le.Uint32(r))+uint64(le.Uint32(r[4:])) > size {
				return nil, fmt.Errorf("stored kernel symbols: a name past the text")
			}
		}
	}
	for i := 1; i < ks.syms.len(); i++ {
		if ks.syms.addr(i) < ks.syms.addr(i-1) {
			return nil, fmt.Errorf("stored kernel symbols: not in order of address")
		}
	}
	return ks, nil
}

// loadKallsyms returns the running kernel's symbols: from the cache c
// (nil: none) when it holds this boot's, else read from /proc/kallsyms
// and kept there.
func loadKallsyms(c *cache.Cache) (*kernelSyms, error) {
	ks, err := keptKallsyms(c, kallsymsFile, kallsymsKey, readKallsyms)
	if err != nil {
		return nil, fmt.Errorf("kernel symbols: %w", err)
	}
	if ks.syms.len() == 0 {
		return nil, fmt.Errorf("kernel symbols: %s shows no addresses (kernel.kptr_restrict): kernel frames stay at their addresses", kallsymsFile)
	}
	return ks, nil
}

// copyKey is the cache key of the kallsyms copy at path: its identity,
// "" when it is not a regular file.
func copyKey(path string) string {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return cache.Key(kallsymsCopyKind, path, cache.Identity(st))
}

// keptKallsyms is the table of the kallsyms file (read whole by read),
// taken from c when kept there under the key keyOf gives ("", or a nil
// c: not kept). A table read is kept when the key is the same after the
// reading (no module loaded meanwhile, the copy not rewritten), relative
// to the file's anchor, read again for the same reason.
func keptKallsyms(c *cache.Cache, file string, keyOf func() string, read func() ([]byte, error)) (*kernelSyms, error) {
	key := ""
	if c != nil {
		key = keyOf()
	}
	if key != "" {
		if name, at, ok := kallsymsAnchor(file); ok {
			// Mapped: a report reads the names of the few symbols its
			// kernel frames are in, not the 2.5 MB of all.
			if b := mapEntry(c, key); b != nil {
				if ks, err := decodeKallsyms(b, name, at); err == nil {
					return ks, nil
				}
			}
		}
	}
	b, err := read()
	if err != nil {
		return nil, err
	}
	ks := parseKallsyms(b)
	if key != "" && ks.syms.len() > 0 && keyOf() == key {
		if name, at, ok := kallsymsAnchor(file); ok {
			writeLocalEntry(c, key, encodeKallsyms(ks, name, at))
		}
	}
	return ks, nil
}
