package loader

import (
	"bloop/internal/testenv"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const cudaCubins = "../../shared/hpctoolkit-cuda/bin/"

// TestCubinCodeFacts: what a cubin says of its code beyond the
// instructions' bits: the SM number (the instruction set's generation),
// every kernel of a Pascal cubin at a multiple of 32 (its bundles), the
// targets of indirect branches (.nv.info) and the callees of absolute
// calls (relocations), as hpcstruct --gpucfg's structure files confirm:
// quicksilver's BRX in CollisionEvent, recursion's call sites (C t=...).
func TestCubinCodeFacts(t *testing.T) {
	for _, tc := range []struct {
		path     string
		sm       int
		indirect map[uint64][]uint64
		calls    map[uint64]uint64
		noCall   uint64 // an absolute call to vprintf, outside the cubin
	}{
		{cubins + "inlines+loops-sm_62-nvcc102-0", 62, nil, nil, 0x146c8},
		{cubins + "inlines+loops-sm_90a-nvcc120-0", 90, nil, nil, 0},
		{cudaCubins + "inlines+loops-sm_75-nvcc112-0", 75, nil, nil, 0x13220},
		{cudaCubins + "quicksilver-sm_70-dr", 70, map[uint64][]uint64{0x44e50: {0x44ff0, 0x44e60, 0x450b0}}, map[uint64]uint64{0x44630: 0x57e00, 0x44b60: 0x58300}, 0},
		{cudaCubins + "recursion-sm_75-nvcc112-0", 75, nil, map[uint64]uint64{0x13520: 0x14000, 0x13d00: 0x11580, 0x15530: 0x14a80}, 0},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			testenv.Shared(t, tc.path)
			img, err := Open(tc.path, Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if img.SM != tc.sm {
				t.Errorf("SM %d, want %d", img.SM, tc.sm)
			}
			for _, s := range img.Sections {
				if tc.sm < 70 && strings.HasPrefix(s.Name, ".text.") && s.Addr%32 != 0 {
					t.Errorf("%s at %#x: not on a bundle", s.Name, s.Addr)
				}
			}
			for at, want := range tc.indirect {
				if got := img.IndirectTargets[at]; !slices.Equal(got, want) {
					t.Errorf("indirect branch at %#x: targets %#x, want %#x", at, got, want)
				}
			}
			if tc.indirect == nil && len(img.IndirectTargets) > 0 {
				t.Errorf("indirect branches %v, want none", img.IndirectTargets)
			}
			for at, want := range tc.calls {
				if got, ok := img.CallTargets[at]; !ok || got != want {
					t.Errorf("call at %#x: callee %#x %v, want %#x", at, got, ok, want)
				}
			}
			if _, ok := img.CallTargets[tc.noCall]; tc.noCall != 0 && ok {
				t.Errorf("call at %#x (vprintf) has a callee in the cubin", tc.noCall)
			}
		})
	}
}

// TestCubinCodeFactsDamaged: a damaged .nv.info list (sizes and counts
// past the section's end) loses what it cannot read, and nothing else.
func TestCubinCodeFactsDamaged(t *testing.T) {
	path := cudaCubins + "quicksilver-sm_70-dr"
	good, err := os.ReadFile(testenv.Shared(t, path))
	if err != nil {
		t.Fatal(err)
	}

	ef := elfView(t, good)
	info := ef.Section(".nv.info._Z14CollisionEventP10MonteCarloR11MC_Particlej")
	if info == nil {
		t.Fatal("no .nv.info of CollisionEvent")
	}
	for name, damage := range map[string]func(b []byte){
		// The targets attribute is the second: format, attribute, size at +10.
		"size past the end": func(b []byte) { binary.LittleEndian.PutUint16(b[info.Offset+10:], 0xfff0) },
		"count past the end": func(b []byte) {
			binary.LittleEndian.PutUint32(b[info.Offset+12+8:], 0xffffffff)
		},
		"first size past the end": func(b []byte) { binary.LittleEndian.PutUint16(b[info.Offset+2:], 0xffff) },
	} {
		b := append([]byte(nil), good...)
		damage(b)
		p := filepath.Join(t.TempDir(), "cubin")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		img, err := Open(p, Options{Workers: 2})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for at, ts := range img.IndirectTargets {
			for _, x := range ts {
				if s := img.SectionAt(at); s == nil || x < s.Addr || x >= s.Addr+uint64(len(s.Data))+1<<32 {
					t.Errorf("%s: target %#x of %#x is beyond any 32-bit offset of its section", name, x, at)
				}
			}
		}
	}
}
