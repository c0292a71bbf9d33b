package profile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/loader"
)

// TestKernelStructure: with the recording kernel's debug vmlinux
// installed, kernel frames get its structure (procedure, loops, lines)
// at their address less the KASLR bias, which kallsyms' _text gives.
// Debian's linux-image-*-dbg stands in for the running kernel: a fake
// release names it, and a kallsyms of that kernel moved by a bias.
func TestKernelStructure(t *testing.T) {
	vms, _ := filepath.Glob("/usr/lib/debug/boot/vmlinux-*")
	if len(vms) == 0 {
		// .ci/run does not install it: 281 MB to fetch, 1.7 GB on disk.
		t.Skip("no kernel debug image (linux-image-*-dbg)")
	}
	text, err := symbolAddr(vms[0], "_text")
	if err != nil {
		t.Fatal(err)
	}
	memchr, err := symbolAddr(vms[0], "memchr")
	if err != nil {
		t.Fatal(err)

	}
	dir := t.TempDir()
	const bias = 0x1e000000
	if err := os.Symlink(vms[0], filepath.Join(dir, "vmlinux-test-release")); err != nil {
		t.Fatal(err)
	}
	ks := fmt.Sprintf("%x T _text\n%x T memchr\n%x T strnlen\n", text+bias, memchr+bias, memchr+bias+0x30)
	for name, data := range map[string]string{"kallsyms": ks, "osrelease": "test-release\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	saved := [3]string{vmlinuxDir, kallsymsFile, releaseFile}
	vmlinuxDir, kallsymsFile, releaseFile = dir, filepath.Join(dir, "kallsyms"), filepath.Join(dir, "osrelease")
	defer func() { vmlinuxDir, kallsymsFile, releaseFile = saved[0], saved[1], saved[2] }()

	p := newProfile(Options{})
	p.sp = newSpace(loader.Options{})
	defer p.sp.close()
	m := p.sp.kernelModule("test-release")
	if m.Img == nil || m.kbias != bias {
		t.Fatalf("vmlinux not opened (err %v, warnings %q), bias %#x", m.Err, p.sp.warnings, m.kbias)
	}
	// memchr (lib/string.c) is a loop over the bytes: some address of it
	// is in a loop, every one in memchr, on a line of lib/string.c.
	loops := 0
	for a := memchr; a < memchr+0x25; a++ {
		path := p.scopesOf(Frame{Mod: m, Addr: a + bias})
		if len(path) == 0 || path[0].Name != "memchr" || path[0].Module != "[kernel]" {
			t.Fatalf("%#x: path %v, want memchr's", a, labels(path))
		}
		last := path[len(path)-1]
		if last.Kind != ElemStmt || !strings.HasSuffix(last.File, "lib/string.c") {
			t.Errorf("%#x: innermost scope %s, want a line of lib/string.c", a, last.Label())
		}
		for _, e := range path {
			if e.Kind == ElemLoop {
				loops++
				break
			}
		}
	}
	if loops == 0 {
		t.Error("no address of memchr in a loop")
	}
}

func labels(path []*Elem) []string {
	var out []string
	for _, e := range path {
		out = append(out, e.Label())
	}
	return out
}
