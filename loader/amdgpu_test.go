package loader

import (
	"bloop/internal/testenv"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// amdgpuBins holds the AMD GPU code objects of ../shared: two OpenCL C
// sources built for gfx908 and gfx90a at -O0, -O2 and -O3.
const amdgpuBins = "../../shared/hpcstruct-amdgpu/bin/"

// TestOpenAMDGPU opens every code object: the processor named by e_flags,
// the kernels (and at -O0 the helper functions) as procedures and not
// their .kd kernel descriptors, every DWARF subprogram with code, a line
// table, and nothing read as corrupt in clang's DWARF 5 for AMD GPUs.
func TestOpenAMDGPU(t *testing.T) {
	bins := testenv.SharedGlob(t, amdgpuBins+"*-gfx*")
	for _, bin := range bins {
		name := filepath.Base(bin)
		img, err := Open(bin, Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		want := regexp.MustCompile(`gfx[0-9a-f]+`).FindString(name)
		if string(img.Arch) != want || !img.Arch.IsAMDGPU() || img.Machine != elf.EM_AMDGPU {
			t.Errorf("%s: arch %s machine %v, want %s EM_AMDGPU", name, img.Arch, img.Machine, want)
		}
		funcs, descriptors := amdgpuSymbols(t, bin)
		var got []string
		for _, fn := range img.Funcs {
			got = append(got, fn.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, funcs) {
			t.Errorf("%s: procedures %v, want the function symbols %v", name, got, funcs)
		}
		if len(descriptors) != len(funcs) && !strings.Contains(name, "-O0") {
			t.Errorf("%s: %d kernel descriptors for %d kernels", name, len(descriptors), len(funcs))
		}
		for _, fn := range img.Funcs {
			if img.SubprogramAt(fn.Addr) == nil {
				t.Errorf("%s: no DWARF procedure for %s", name, fn.Name)
			}
			if _, ok := img.Lines.Lookup(fn.Addr); !ok {
				t.Errorf("%s: no line row at %s", name, fn.Name)
			}
		}
		if len(img.Corrupt) > 0 || len(img.Warnings) > 0 {
			t.Errorf("%s: corrupt %v, warnings %v", name, img.Corrupt, img.Warnings)
		}
	}
}

// amdgpuSymbols are the names of a code object's function symbols and
// of its kernel descriptors (objects named <kernel>.kd), sorted.
func amdgpuSymbols(t *testing.T, bin string) (funcs, kd []string) {
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		switch {
		case elf.ST_TYPE(s.Info) == elf.STT_FUNC:
			funcs = append(funcs, s.Name)
		case strings.HasSuffix(s.Name, ".kd"):
			kd = append(kd, s.Name)
		}
	}
	slices.Sort(funcs)
	return funcs, kd
}

// TestAMDGPUTarget: a code object for a processor whose encodings bloop
// does not decode (gfx1030, RDNA 2) is refused with an error naming the
// file and the processor value; Check refuses it too.
func TestAMDGPUTarget(t *testing.T) {
	b, err := os.ReadFile(testenv.Shared(t, amdgpuBins+"stencil-gfx90a-clang14-O2"))
	if err != nil {
		t.Fatal(err)

	}
	flags := binary.LittleEndian.Uint32(b[ehFlags:])
	binary.LittleEndian.PutUint32(b[ehFlags:], flags&^efAMDGPUMach|0x036)
	path := filepath.Join(t.TempDir(), "k.co")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path, Options{})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "0x36") {
		t.Errorf("Open: %v; want an error naming %s and EF_AMDGPU_MACH 0x36", err, path)
	}
	if Check(path) == nil {
		t.Error("Check accepts it")
	}
}
