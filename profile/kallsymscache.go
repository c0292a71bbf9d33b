package profile

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"bloop/cache"
	"bloop/internal/varint"
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
	kallsymsKind  = "kernel symbols 2"
	kallsymsMagic = "bloop kernel symbols 2\n"
	// A copy of kallsyms (perf's, in its build-id cache) is kept by the
	// copy's identity: read and parsed, 5 MB were 10 ms of CPU and 11 MB
	// of garbage in each report of a recording with kernel frames, where
	// the stored table takes 2.5 ms. Its addresses are kept relative to
	// the copy's first text symbol, as the running kernel's are.
	kallsymsCopyKind = "kernel symbols copy 1"
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

// encodeKallsyms: the anchor's name, then each symbol's address as the
// gap from the previous one (the first: from the anchor, zigzag) and its
// name, then the aliases: each one's address from the anchor (zigzag)
// and name.
func encodeKallsyms(ks *kernelSyms, anchor string, at uint64) []byte {
	b := appendStr([]byte(kallsymsMagic), anchor)
	b = binary.AppendUvarint(b, uint64(len(ks.addrs)))
	prev := at
	for i, a := range ks.addrs {
		if i == 0 {
			b = binary.AppendVarint(b, int64(a-at))
		} else {
			b = binary.AppendUvarint(b, a-prev)
		}
		prev = a
		b = appendStr(b, ks.names[i])
	}
	b = binary.AppendUvarint(b, uint64(len(ks.aliases)))
	for i, name := range ks.aliases {
		b = binary.AppendVarint(b, int64(ks.aliasAt[i]-at))
		b = appendStr(b, name)
	}
	return b
}

func appendStr(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// decodeKallsyms reads a stored table whose anchor is at address at
// now; an error when it is damaged or has another anchor.
func decodeKallsyms(b []byte, anchor string, at uint64) (*kernelSyms, error) {
	rest, ok := bytes.CutPrefix(b, []byte(kallsymsMagic))
	if !ok {
		return nil, fmt.Errorf("not stored kernel symbols")
	}
	// One string holds every name; each symbol's is a slice of it.
	all := string(rest)
	r := &varint.Reader{B: rest}
	str := func() string {
		b := r.Bytes()
		off := len(rest) - len(r.B) - len(b)
		return all[off : off+len(b)]
	}
	if name := str(); r.Err != nil || name != anchor {
		return nil, fmt.Errorf("stored kernel symbols of another anchor")
	}
	n := r.Count()
	ks := &kernelSyms{addrs: make([]uint64, n), names: make([]string, n)}
	prev := at
	for i := range ks.addrs {
		if i == 0 {
			prev = at + uint64(r.Int())
		} else {
			prev += r.Uint()
		}
		ks.addrs[i] = prev
		ks.names[i] = str()
	}
	if n := r.Count(); n > 0 {
		ks.aliases, ks.aliasAt = make([]string, n), make([]uint64, n)
		for i := range ks.aliases {
			ks.aliasAt[i] = at + uint64(r.Int())
			ks.aliases[i] = str()
		}
	}
	if err := r.End(); err != nil {
		return nil, fmt.Errorf("stored kernel symbols: %w", err)
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
	if len(ks.addrs) == 0 {
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
			if b := readEntry(c, key); b != nil {
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
	if key != "" && len(ks.addrs) > 0 && keyOf() == key {
		if name, at, ok := kallsymsAnchor(file); ok {
			writeLocalEntry(c, key, encodeKallsyms(ks, name, at))
		}
	}
	return ks, nil
}
