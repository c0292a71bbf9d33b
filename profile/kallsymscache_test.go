package profile

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"bloop/cache"
)

// fakeKernel points the kernel's files at a directory of the test's.
func fakeKernel(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	saved := [4]string{kallsymsFile, releaseFile, bootIDFile, modulesFile}
	kallsymsFile, releaseFile = filepath.Join(dir, "kallsyms"), filepath.Join(dir, "osrelease")
	bootIDFile, modulesFile = filepath.Join(dir, "boot_id"), filepath.Join(dir, "modules")
	t.Cleanup(func() { kallsymsFile, releaseFile, bootIDFile, modulesFile = saved[0], saved[1], saved[2], saved[3] })
	return dir
}

// kallsymsText is a kallsyms of a kernel loaded at base, with a module's
// symbols when mod is set, and extra text symbols (which only a reading
// of the whole file finds).
func kallsymsText(base uint64, mod bool, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%016x A fixed_percpu_data\n%016x T _text\n%016x T _stext\n%016x t do_one\n%016x D some_data\n%016x W weak_one\n",
		0, base, base, base+0x100, base+0x200, base+0x300)
	for i, name := range extra {
		fmt.Fprintf(&b, "%016x T %s\n", base+0x1000+uint64(i)*0x10, name)
	}
	if mod {
		fmt.Fprintf(&b, "%016x t mod_fn\t[somemod]\n", base+0x3f000000)
	}
	return b.String()
}

// sameSyms reports whether two tables hold the same symbols and
// aliases, however they are held (parsed, or read where stored).
func sameSyms(a, b *kernelSyms) bool {
	if a == nil || b == nil {
		return a == b
	}
	return reflect.DeepEqual(a.syms.list(), b.syms.list()) && reflect.DeepEqual(a.aliases.list(), b.aliases.list())
}

// TestKallsymsCache: the kernel's symbols are read from the cache while
// the boot, the release and the modules' places are the same, whatever
// the load address (kept relative to the first text symbol), and read
// afresh when any of them changes.
func TestKallsymsCache(t *testing.T) {
	const base = 0xffffffff81000000
	dir := fakeKernel(t)
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write("boot_id", "boot-1\n")
	write("osrelease", "6.1.0-test\n")
	write("modules", "somemod 16384 0 - Live 0xffffffffc0000000\n")
	write("kallsyms", kallsymsText(base, true))
	first, err := loadKallsyms(c)
	if err != nil {
		t.Fatal(err)
	}
	want := parseKallsyms([]byte(kallsymsText(base, true)))
	if !sameSyms(first, want) {
		t.Fatalf("first reading %v, want %v", first, want)
	}
	// From here on the file has a symbol more than the kept table: the
	// table is the cache's while no key changes.
	for _, tc := range []struct {
		name      string
		files     map[string]string
		base      uint64
		fromCache bool
	}{
		{"same boot", nil, base, true},
		{"module reference count", map[string]string{"modules": "somemod 16384 3 - Live 0xffffffffc0000000\n"}, base, true},
		{"moved load address", nil, base + 0x2000000, true},
		{"module moved", map[string]string{"modules": "somemod 16384 0 - Live 0xffffffffc0100000\n"}, base, false},
		{"module loaded", map[string]string{"modules": "somemod 16384 0 - Live 0xffffffffc0000000\nother 8192 0 - Live 0xffffffffc0200000\n"}, base, false},
		{"no modules", map[string]string{"modules": ""}, base, false},
		{"reboot", map[string]string{"boot_id": "boot-2\n"}, base, false},
		{"other release", map[string]string{"osrelease": "6.1.0-other\n"}, base, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write("boot_id", "boot-1\n")
			write("osrelease", "6.1.0-test\n")
			write("modules", "somemod 16384 0 - Live 0xffffffffc0000000\n")
			for name, data := range tc.files {
				write(name, data)
			}
			if m, ok := tc.files["modules"]; ok && m == "" {
				os.Remove(filepath.Join(dir, "modules"))
			}
			write("kallsyms", kallsymsText(tc.base, true, "added_later"))
			got, err := loadKallsyms(c)
			if err != nil {
				t.Fatal(err)
			}
			want := parseKallsyms([]byte(kallsymsText(tc.base, true, "added_later")))
			if tc.fromCache {
				want = parseKallsyms([]byte(kallsymsText(tc.base, true)))
			}
			if !sameSyms(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
			// What a fresh reading kept, the next one finds.
			if again, err := loadKallsyms(c); err != nil || !sameSyms(again, got) {
				t.Errorf("second reading %v (%v), want %v", again, err, got)
			}
			// Back to the first state's table for the next case.
			if !tc.fromCache {
				write("boot_id", "boot-1\n")
				write("osrelease", "6.1.0-test\n")
				write("modules", "somemod 16384 0 - Live 0xffffffffc0000000\n")
			}
		})
	}
}

// TestKallsymsCacheRefuses: hidden addresses are an error as without a
// cache; a damaged entry or an unreadable boot id means reading the file.
func TestKallsymsCacheRefuses(t *testing.T) {
	dir := fakeKernel(t)
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "osrelease"), []byte("r\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "boot_id"), []byte("b\n"), 0o644)
	hidden := "0000000000000000 T _text\n0000000000000000 t do_one\n"
	os.WriteFile(filepath.Join(dir, "kallsyms"), []byte(hidden), 0o644)
	if _, err := loadKallsyms(c); err == nil || !strings.Contains(err.Error(), "kptr_restrict") {
		t.Errorf("hidden addresses: error %v", err)
	}
	full := kallsymsText(0xffffffff81000000, false)
	os.WriteFile(filepath.Join(dir, "kallsyms"), []byte(full), 0o644)
	if _, err := loadKallsyms(c); err != nil {
		t.Fatal(err)
	}
	// Damage the entry: the file is read again.
	b := readEntry(c, kallsymsKey())
	if b == nil {
		t.Fatal("nothing kept")
	}
	writeLocalEntry(c, kallsymsKey(), b[:len(b)-3])
	os.WriteFile(filepath.Join(dir, "kallsyms"), []byte(kallsymsText(0xffffffff81000000, false, "x")), 0o644)
	got, err := loadKallsyms(c)
	if err != nil || !sameSyms(got, parseKallsyms([]byte(kallsymsText(0xffffffff81000000, false, "x")))) {
		t.Errorf("damaged entry: %v (%v)", got, err)
	}
	// No boot id: nothing kept, the file read each time.
	os.Remove(filepath.Join(dir, "boot_id"))
	if kallsymsKey() != "" {
		t.Error("a key without a boot id")
	}
	os.WriteFile(filepath.Join(dir, "kallsyms"), []byte(kallsymsText(0xffffffff81000000, false, "y")), 0o644)
	got, err = loadKallsyms(c)
	if err != nil || !sameSyms(got, parseKallsyms([]byte(kallsymsText(0xffffffff81000000, false, "y")))) {
		t.Errorf("no boot id: %v (%v)", got, err)
	}
}

// TestKallsymsRoundTrip: the stored form gives back the table, at any
// anchor address, and refuses another anchor's.
func TestKallsymsRoundTrip(t *testing.T) {
	ks := parseKallsyms([]byte(kallsymsText(0xffffffff81000000, true, "a", "b")))
	b := encodeKallsyms(ks, "_text", 0xffffffff81000000)
	got, err := decodeKallsyms(b, "_text", 0xffffffff81000000)
	if err != nil || !sameSyms(got, ks) {
		t.Fatalf("round trip: %v (%v)", got, err)
	}
	if _, err := decodeKallsyms(b, "_stext", 0xffffffff81000000); err == nil {
		t.Error("another anchor accepted")
	}
	for n := 0; n < len(b); n++ {
		if _, err := decodeKallsyms(b[:n], "_text", 0xffffffff81000000); err == nil {
			t.Fatalf("truncated to %d of %d bytes: accepted", n, len(b))
		}
	}
}

// TestKallsymsDamaged: a stored table whose name runs past its text,
// or whose addresses are out of order, is refused, not read.
func TestKallsymsDamaged(t *testing.T) {
	ks := parseKallsyms([]byte(kallsymsText(0xffffffff81000000, true, "a", "b")))
	b := encodeKallsyms(ks, "_text", 0xffffffff81000000)
	if _, err := decodeKallsyms(b, "_text", 0xffffffff81000000); err != nil {
		t.Fatal(err)
	}
	// The header: magic, anchor (4 + 5 bytes), counts (24 bytes).
	head := len(kallsymsMagic) + 4 + len("_text") + 24
	n := ks.syms.len()
	for _, tc := range []struct {
		name string
		at   int // offset in b of a 32- or 64-bit word set to v
		v    uint64
		want string
	}{
		{"name past the text", head + 8*n + 4, 1 << 20, "past the text"},
		{"alias past the text", head + 16*n + 8*ks.aliases.len(), 1 << 20, "past the text"},
		{"out of order", head + 8, 1 << 40, "not in order"},
		{"symbols counted wrong", head - 24, uint64(n + 1), "bytes for"},
	} {
		bad := append([]byte(nil), b...)
		if strings.Contains(tc.name, "past") {
			binary.LittleEndian.PutUint32(bad[tc.at:], uint32(tc.v))
		} else {
			binary.LittleEndian.PutUint64(bad[tc.at:], tc.v)
		}
		if _, err := decodeKallsyms(bad, "_text", 0xffffffff81000000); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

// FuzzDecodeKallsyms: a stored table is input too (a disk can corrupt
// it): any bytes are refused or give a table whose look-ups answer, and
// which stores to the same bytes.
func FuzzDecodeKallsyms(f *testing.F) {
	f.Add(encodeKallsyms(parseKallsyms([]byte(kallsymsText(0xffffffff81000000, true, "a", "b"))), "_text", 0xffffffff81000000))
	f.Add([]byte(kallsymsMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		const at = 0xffffffff81000000
		ks, err := decodeKallsyms(b, "_text", at)
		if err != nil {
			return
		}
		for i := range ks.syms.len() {
			// The symbol found at a symbol's address starts there (it or
			// another at the same address), unless it has no name.
			a := ks.syms.addr(i)
			if name, start, ok := ks.lookup(a); ok != (name != "") || ok && start != a {
				t.Fatalf("symbol %d at %#x: looked up as %q at %#x (%v)", i, a, name, start, ok)
			}
		}
		ks.lookup(0)
		ks.lookup(^uint64(0))
		ks.addrOf("_etext")
		again := encodeKallsyms(ks, "_text", at)
		ks2, err := decodeKallsyms(again, "_text", at)
		if err != nil || !sameSyms(ks, ks2) {
			t.Fatalf("a decoded table does not decode the same once stored again: %v", err)
		}
	})
}

// TestTextSymbol: a kallsyms line's text symbol, its fields separated by
// spaces or tabs (a module's name follows a tab); other symbols and
// lines without an address are not.
func TestTextSymbol(t *testing.T) {
	for _, tc := range []struct {
		line string
		name string
		addr uint64
		ok   bool
	}{
		{"ffffffff81000000 T _text", "_text", 0xffffffff81000000, true},
		{"ffffffffc0a01000 t nf_hook\t[nf_tables]", "nf_hook", 0xffffffffc0a01000, true},
		{"  ffffffff81000010  W  weak_one  ", "weak_one", 0xffffffff81000010, true},
		{"ffffffff81000020 w weak_two\r", "weak_two", 0xffffffff81000020, true},
		{"FFFFFFFF81000030 T upper_hex", "upper_hex", 0xffffffff81000030, true},
		{"ffffffff81000040 t  two_blanks", "two_blanks", 0xffffffff81000040, true},
		{"ffffffff8100005g T bad_digit", "", 0, false},
		{"ffffffff82000000 D some_data", "", 0, false},
		{"ffffffff82000000 TT two_letters", "", 0, false},
		{"0000000000000000 T hidden", "", 0, false}, // kptr_restrict
		{"ffffffff81000000 T", "", 0, false},
		{"zz T bad_address", "", 0, false},
		{"", "", 0, false},
	} {
		name, addr, ok := textSymbol(tc.line)
		if name != tc.name || addr != tc.addr || ok != tc.ok {
			t.Errorf("textSymbol(%q) = %q %#x %v, want %q %#x %v", tc.line, name, addr, ok, tc.name, tc.addr, tc.ok)
		}
	}
}

// TestKallsymsCopyKept: a copy of kallsyms (perf's) is parsed once and
// then read from the cache, giving the same table; a copy written anew
// (another boot's addresses) is parsed again; without a cache nothing is
// kept.
func TestKallsymsCopyKept(t *testing.T) {
	const base = 0xffffffff81000000
	path := filepath.Join(t.TempDir(), "kallsyms")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	keyOf := func() string { return copyKey(path) }
	for i, b := range []uint64{base, base + 0x2e00000} {
		write(kallsymsText(b, true, "copy_fn"))
		want := parseKallsyms([]byte(kallsymsText(b, true, "copy_fn")))
		if readEntry(c, keyOf()) != nil {
			t.Fatalf("copy %d: kept before it was read", i)
		}
		for _, from := range []string{"the copy", "the cache"} {
			got, err := readKallsymsCopy(c, path)
			if err != nil {
				t.Fatalf("copy %d, from %s: %v", i, from, err)
			}
			if !sameSyms(got, want) {
				t.Errorf("copy %d, from %s: %+v, want %+v", i, from, got, want)
			}
			if readEntry(c, keyOf()) == nil {
				t.Fatalf("copy %d: not kept after reading %s", i, from)
			}
		}
		if got, _ := readKallsymsCopy(nil, path); !sameSyms(got, want) {
			t.Errorf("copy %d without a cache: %+v, want %+v", i, got, want)
		}
	}
	write("0000000000000000 T _text\n0000000000000000 t do_one\n") // kernel.kptr_restrict
	if _, err := readKallsymsCopy(c, path); err == nil || !strings.Contains(err.Error(), "no text symbol") {
		t.Errorf("copy without addresses: %v, want an error", err)
	}
}
