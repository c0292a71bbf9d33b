package loader

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bloop/fuzzing"
)

// FuzzOpen: any bytes give an image or one error naming the file; never a
// panic or a hang. Seeds are corpus binaries, plain and with compressed
// DWARF (inflated in small steps, so streaming is exercised too), DWARF 4
// and zstd.
func FuzzOpen(f *testing.F) {
	for _, name := range []string{"loops-gcc12-O2", "inline-clang14-O2g1"} {
		src := filepath.Join("../testdata/bin", name)
		if b, err := os.ReadFile(src); err == nil {
			f.Add(b)
		}
		if objcopy, err := exec.LookPath("objcopy"); err == nil {
			dst := filepath.Join(f.TempDir(), name)
			if exec.Command(objcopy, "--compress-debug-sections=zlib", src, dst).Run() == nil {
				if b, err := os.ReadFile(dst); err == nil {
					f.Add(b)
				}
			}
		}
	}
	// DWARF 4 and compressed sections without objcopy (testdata/seeds/README.md).
	seeds, _ := filepath.Glob("testdata/seeds/*-*")
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil && !strings.HasSuffix(p, ".md") {
			f.Add(b)
		}
	}
	// Cubins, whose headers and relocations are read by hand (cubin.go),
	// and whose line programs may describe inlined calls (lineinline.go).
	for _, name := range []string{"inlines+loops-sm_62-nvcc102-dr", "inlines+loops-sm_90a-nvcc120-0", lineInlineCubin} {
		if b, err := os.ReadFile(cubins + name); err == nil {
			f.Add(b)
		}
	}
	// AMD GPU code objects (gfx908, gfx90a: e_flags name the processor).
	amd, _ := filepath.Glob(amdgpuBins + "*-gfx*")
	for _, p := range amd {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	defer func(n int) { inflateChunk = n }(inflateChunk)
	inflateChunk = 1 << 10
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := fuzzing.WriteInput(t, dir, "bin", b)
		// A hang fails with every goroutine's stack.
		defer fuzzing.Watchdog("Open", 10*time.Second)()
		cerr := Check(path)
		// DyninstDeclNames walks the trees below abstract origins too.
		img, err := Open(path, Options{Workers: 2, DebugDirs: []string{dir}, DyninstDeclNames: true})
		if cerr != nil && err == nil {
			t.Errorf("Check refuses (%v), Open accepts", cerr)
		}
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Errorf("error %v is not a loader.Error naming the file", err)
			}
			return
		}
		// What was read is usable: lookups on every procedure's entry.
		for _, fn := range img.Funcs {
			img.Lines.Lookup(fn.Addr)
			if p := img.SubprogramAt(fn.Addr); p != nil {
				p.InlineChain(fn.Addr, nil)
			}
		}
	})
}

// TestOpenMutants damages bytes past the ELF header of corpus binaries,
// plain and with compressed DWARF, and of cubins, so that section tables,
// symbols, relocations and DWARF are hit: every Open returns an image or
// an Error naming the file.
func TestOpenMutants(t *testing.T) {
	defer func(n int) { inflateChunk = n }(inflateChunk)
	inflateChunk = 256
	dir := t.TempDir()
	var seeds [][]byte
	for _, name := range []string{"tmpl-gcc12-O2", "nest-gfortran12-O2"} {
		src := filepath.Join("../testdata/bin", name)
		if b, err := os.ReadFile(src); err == nil {
			seeds = append(seeds, b)
		}
		if objcopy, err := exec.LookPath("objcopy"); err == nil {
			dst := filepath.Join(dir, name+".z")
			if exec.Command(objcopy, "--compress-debug-sections=zlib", src, dst).Run() == nil {
				if b, err := os.ReadFile(dst); err == nil {
					seeds = append(seeds, b)
				}
			}
		}
	}
	for _, name := range []string{"inlines+loops-sm_62-nvcc102-0", "inlines+loops-sm_90a-nvcc120-0"} {
		if b, err := os.ReadFile(cubins + name); err == nil {
			seeds = append(seeds, b)
		}
	}
	if b, err := os.ReadFile(amdgpuBins + "stencil-gfx90a-clang14-O2"); err == nil {
		seeds = append(seeds, b)
	}
	seed := uint32(1)
	rnd := func(n int) int { seed = seed*1664525 + 1013904223; return int(seed>>8) % n }
	opened := 0
	for _, b := range seeds {
		for i := 0; i < 150; i++ {
			m := append([]byte(nil), b...)
			for k := 1 + rnd(8); k > 0; k-- {
				m[64+rnd(len(m)-64)] = byte(rnd(256))
			}
			path := filepath.Join(dir, "bin")
			if err := os.WriteFile(path, m, 0o644); err != nil {
				t.Fatal(err)
			}
			img, err := Open(path, Options{Workers: 2, DyninstDeclNames: i%2 == 0})
			if err != nil {
				if _, ok := err.(*Error); !ok {
					t.Errorf("error %v is not a loader.Error naming the file", err)
				}
				continue
			}
			opened++
			for _, fn := range img.Funcs {
				img.Lines.Lookup(fn.Addr)
			}
		}
	}
	if len(seeds) > 0 && opened == 0 {
		t.Error("no damaged binary opened: the damage never reached past the headers")
	}
}
