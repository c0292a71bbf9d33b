package loader

import (
	"bloop/internal/testenv"
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const corpus = "../testdata/bin/"

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(corpus + "loops-gcc12-O2")
	if err != nil {
		t.Fatal("testdata binaries missing")
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	elf32 := append([]byte(nil), good[:64]...)
	elf32[4] = 1 // ELFCLASS32
	bigEndian := append([]byte(nil), good...)
	bigEndian[5] = 2
	hugeShoff := append([]byte(nil), good...)
	copy(hugeShoff[0x28:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0})
	tests := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "nope"), "cannot read"},
		{"directory", dir, "is a directory"},
		{"empty", write("empty", nil), "not an ELF file"},
		{"text", write("text", []byte("#!/bin/sh\n")), "not an ELF file"},
		{"32-bit", write("elf32", elf32), "unsupported ELF"},
		{"big-endian", write("be", bigEndian), "unsupported ELF"},
		{"header only", write("hdr", good[:64]), ""},
		{"truncated", write("trunc", good[:len(good)/2]), ""},
		{"section table far away", write("shoff", hugeShoff), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(tc.path, Options{})
			if err == nil {
				t.Fatalf("no error")
			}
			if !strings.HasPrefix(err.Error(), tc.path+": ") {
				t.Errorf("error %q does not start with the file name", err)
			}
			if tc.want != "" && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// TestTruncations opens every prefix (in steps) of a binary: an error or
// an image, never a panic.
func TestTruncations(t *testing.T) {
	good, err := os.ReadFile(corpus + "inline-gcc12-O2")
	if err != nil {
		t.Fatal("testdata binaries missing")
	}
	p := filepath.Join(t.TempDir(), "x")
	for n := 0; n < len(good); n += 97 {
		os.WriteFile(p, good[:n], 0o644)
		Open(p, Options{})
	}
}

func TestImageBasics(t *testing.T) {
	img, err := Open(corpus+"libinline-gcc12-O2.so", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !img.Shared || img.Arch != AMD64 {
		t.Errorf("shared=%v arch=%v, want a shared amd64 library", img.Shared, img.Arch)
	}
	exe, err := Open(corpus+"inline-gcc12-O2", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if exe.Shared {
		t.Errorf("a PIE executable was taken for a shared library")
	}
	if !exe.HasInlineInfo() || exe.Lines.Empty() {
		t.Errorf("inline info %v, lines %d", exe.HasInlineInfo(), exe.Lines.Len())
	}
	plt := 0
	for _, f := range exe.Funcs {
		if f.PLT {
			plt++
			if !strings.HasSuffix(f.Name, "@plt") || f.End-f.Addr == 0 {
				t.Errorf("bad PLT stub %+v", f)
			}
		}
	}
	if plt == 0 {
		t.Errorf("no PLT stubs")
	}
	for i := 1; i < exe.Lines.Len(); i++ {
		if exe.Lines.Row(i).Addr < exe.Lines.Row(i-1).End {
			t.Fatalf("line rows overlap at %#x", exe.Lines.Row(i).Addr)
		}
	}
}

// TestSymbolizerOracle compares, for sampled code addresses of corpus
// binaries, our line and inline chain with llvm-symbolizer --inlining.
func TestSymbolizerOracle(t *testing.T) {
	sym := testenv.Need(t, "llvm-symbolizer")
	for _, name := range []string{"inline-gcc12-O2", "inline-clang14-O2", "tmpl-gcc12-O2", "tmpl-clang14-O2", "nest-gfortran12-O2"} {
		img, err := Open(corpus+name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var addrs []uint64
		for i := range img.Lines.Len() {
			r := img.Lines.Row(i)
			addrs = append(addrs, r.Addr)
		}
		if len(addrs) > 2000 {
			addrs = addrs[:2000]
		}
		var in bytes.Buffer
		for _, a := range addrs {
			in.WriteString("0x" + strconv.FormatUint(a, 16) + "\n")
		}
		cmd := exec.Command(sym, "--inlining", "--functions=none", "--relative-address", "--obj="+corpus+name)
		cmd.Stdin = &in
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		// One block per address: frames innermost first, then a blank line.
		sc := bufio.NewScanner(bytes.NewReader(out))
		var blocks [][]string
		var cur []string
		for sc.Scan() {
			if sc.Text() == "" {
				blocks = append(blocks, cur)
				cur = nil
				continue
			}
			cur = append(cur, sc.Text())
		}
		if len(blocks) != len(addrs) {
			t.Fatalf("%s: %d answers for %d addresses", name, len(blocks), len(addrs))
		}
		lineBad, depthBad := 0, 0
		for i, a := range addrs {
			row, _ := img.Lines.Lookup(a)
			frames := blocks[i]
			// innermost frame: file:line:column
			parts := strings.Split(frames[0], ":")
			if len(parts) < 2 {
				continue
			}
			line, _ := strconv.Atoi(parts[len(parts)-2])
			if line != row.Line || filepath.Base(strings.Join(parts[:len(parts)-2], ":")) != filepath.Base(row.File) {
				lineBad++
			}
			depth := 0
			if sp := img.SubprogramAt(a); sp != nil {
				depth = len(sp.InlineChain(a, nil))
			}
			if depth != len(frames)-1 {
				depthBad++
			}
		}
		t.Logf("%s: %d addresses, %d line mismatches, %d inline-depth mismatches", name, len(addrs), lineBad, depthBad)
		if lineBad*100 > len(addrs) || depthBad*100 > len(addrs) {
			t.Errorf("%s: more than 1%% disagree with llvm-symbolizer (lines %d, inline depth %d of %d)", name, lineBad, depthBad, len(addrs))
		}
	}
}

// TestOpenResolvesLinks: a module is named by the file a symbolic link
// points to, as hpcstruct names it and hpcrun records it (libgsl.so.27 ->
// libgsl.so.27.0.0).
func TestOpenResolvesLinks(t *testing.T) {
	target, err := filepath.Abs("../testdata/bin/libinline-gcc12-O2.so")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); err != nil {
		t.Fatal("corpus missing")
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "libinline.so.1")
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	chain := filepath.Join(dir, "libinline.so")
	if err := os.Symlink("libinline.so.1", chain); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, chain} {
		img, err := Open(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if img.Path != target || img.Name != "libinline-gcc12-O2.so" {
			t.Errorf("Open(%s): Path %q, Name %q; want %q, libinline-gcc12-O2.so", p, img.Path, img.Name, target)
		}
	}
}

// TestPLTGotNames pins how .plt.got stubs are named: by the GLOB_DAT
// relocation of their GOT slot when the section holds several stubs (as
// hpcstruct names libgsl's), targ<addr> when it holds one (as hpcstruct
// names the lone __cxa_finalize stub of every reference binary).
func TestPLTGotNames(t *testing.T) {
	const gsl = "/usr/lib/x86_64-linux-gnu/libgsl.so.27"
	cases := []struct {
		bin, buildID string
		addr         uint64
		want         string
	}{
		{corpus + "inline-gcc12-O2", "", 0x1050, "targ1050@plt"},
		{gsl, "a6c5261a1af7a903879da759adfab7fb4398effc", 0x6b2e0, "gsl_integration_qk15@plt"},
		{gsl, "a6c5261a1af7a903879da759adfab7fb4398effc", 0x6b2e8, "gsl_integration_qk21@plt"},
		{gsl, "a6c5261a1af7a903879da759adfab7fb4398effc", 0x6b2f0, "__cxa_finalize@plt"},
	}
	for _, c := range cases {
		if c.buildID != "" && !isBuild(t, c.bin, c.buildID) {
			continue
		}
		img, err := Open(c.bin, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, f := range img.Funcs {
			if f.Addr == c.addr && f.PLT {
				got = f.Name
			}
		}
		if got != c.want {
			t.Errorf("%s %#x: stub %q, want %q", c.bin, c.addr, got, c.want)
		}
	}
}
