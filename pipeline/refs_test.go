package pipeline

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bloop/diff"
	"bloop/dyninst"
	"bloop/internal/sharedrefs"
	"bloop/internal/testenv"
	"bloop/loader"
	"bloop/structure"
)

// notExact names the reference binaries whose real-hpcstruct output bloop
// does not reproduce exactly, and why. Each must still agree with
// hpcstruct on at least 99.5% of code bytes' scope paths (procedure,
// inline chain, loop chain, line), compared with callee names ignored when
// the reason is a naming one; floor guards the full comparison.
var notExact = map[string]struct {
	reason      string
	ignoreNames bool
	floor       float64
}{
	// Only without c++filt: with it, names come from GNU's demangler as in
	// hpcstruct and this binary matches exactly too.
	"tmpl-clang14-O2": {"without c++filt, three inlined callees (std::swap<int>, two std::__fill_a1) are named differently: the Go demangler numbers substitutions inside `sr` unresolved names unlike GNU's (TestDemangleOracle); the structure itself matches", true, 0.98},
}

// refCase is a binary and the structure file hpcstruct wrote for it;
// gpucfg: with --gpucfg yes (a cubin's loops and call sites).
type refCase struct {
	bin, ref string
	gpucfg   bool
}

func refCases(t *testing.T) []refCase {
	var cases []refCase
	// hpctoolkit-cuda's binaries are cubins too; its +gpucfg goldens are
	// hpcstruct --gpucfg's, for them and hpctoolkit-tests' sm_62 cubins
	// (gpucfgCases): their names hold no binary of the folder.
	// hpcstruct-amdgpu's gfx908 code objects have none (hpcstruct aborts
	// on them): TestAMDGPULoops.
	for _, dir := range []string{"../../shared/hpctoolkit-tests", "../../shared/hpcstruct-refs", "../../shared/hpctoolkit-cuda", "../../shared/hpcstruct-amdgpu"} {
		bins, _ := filepath.Glob(filepath.Join(dir, "bin", "*"))
		for _, b := range bins {
			name := filepath.Base(b)
			ref := filepath.Join(dir, "struct", name+".hpcstruct")
			if strings.HasSuffix(name, ".license") {
				continue
			}
			if _, err := os.Stat(ref); err != nil && strings.Contains(name, "-sm_") {
				continue // cubins hpcstruct wrote no structure for (sm_90a): TestCubinsWithoutReference
			}
			if _, err := os.Stat(ref); err != nil && strings.Contains(name, "-gfx") {
				continue
			}
			cases = append(cases, refCase{bin: b, ref: ref})
		}
	}
	cases = append(cases, gpucfgCases()...)
	// Cross-compiled references: the architectures bloop decodes.
	dir := "../../shared/hpcstruct-refs-arch"
	bins, _ := filepath.Glob(filepath.Join(dir, "bin", "*"))
	for _, b := range bins {
		cases = append(cases, refCase{bin: b, ref: filepath.Join(dir, "struct", filepath.Base(b)+".hpcstruct")})
	}
	if len(cases) == 0 {
		testenv.Absent(t, "../../shared reference binaries not present")
	}
	return cases
}

// gpucfgCases are the structure files hpcstruct --gpucfg yes wrote for
// cubins (../shared/hpctoolkit-cuda/struct/*+gpucfg.hpcstruct), each with
// its cubin from hpctoolkit-cuda or hpctoolkit-tests.
func gpucfgCases() []refCase {
	var cases []refCase
	bins, refs := sharedrefs.GPUCFG("../../shared")
	for i := range bins {
		cases = append(cases, refCase{bins[i], refs[i], true})
	}
	return cases
}

// compatStructure is `bloop struct --compat hpcstruct`'s output for bin.
func compatStructure(t testing.TB, bin string, workers int) []byte {
	return structureAllowing(t, bin, workers, nil)
}

// structureAllowing is compatStructure, where the procedure problems of the
// kinds in allowed (the binary's, not bloop's) are no error.
func structureAllowing(t testing.TB, bin string, workers int, allowed []string) []byte {
	return structureWith(t, bin, Options{Workers: workers, Dyninst: dyninst.Hpcstruct}, allowed)
}

// structureWith is the structure file of bin under opt (workers loading
// as many as analysing), where the procedure problems of the kinds in
// allowed are no error.
func structureWith(t testing.TB, bin string, opt Options, allowed []string) []byte {
	img, err := Open(bin, loader.Options{Workers: opt.Workers}, opt)
	if err != nil {
		t.Fatal(err)
	}
	mod, errs := Analyze(img, opt)
	for _, e := range errs {
		if !slices.Contains(allowed, e.Kind) {
			t.Errorf("%s: %v", bin, e)
		}
	}
	var buf bytes.Buffer
	if err := structure.WriteXML(&buf, []*structure.Module{mod}, false); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHPCStructReferences compares bloop with the structure files real
// hpcstruct wrote, under HPCToolkit's canonical comparison.
func TestHPCStructReferences(t *testing.T) {
	exact := 0
	cases := refCases(t)
	for _, c := range cases {
		name := filepath.Base(c.bin)
		if c.gpucfg {
			name += "+gpucfg"
		}
		t.Run(name, func(t *testing.T) {
			out := structureWith(t, c.bin, Options{Workers: 2, Dyninst: dyninst.Hpcstruct, GPUCFG: c.gpucfg}, nil)
			got, err := structure.Parse(bytes.NewReader(out), name)
			if err != nil {
				t.Fatalf("our output does not parse: %v", err)
			}
			ref, err := structure.ParseFile(c.ref)
			if err != nil {
				t.Fatal(err)
			}
			eq, diffs := diff.Equal(ref, got)
			if !eq {
				eq, diffs = sameRangeless(diffs)
			}
			same, total := diff.PathAgreement(ref, got)
			share := float64(same) / float64(max(total, 1))
			known_, known := notExact[name]
			if _, err := exec.LookPath("c++filt"); err == nil {
				known = false // GNU names: everything must match exactly
			}
			switch {
			case eq:
				exact++
				if known {
					t.Errorf("now matches exactly: remove it from notExact")
				}
			case !known:
				for i, d := range diffs {
					if i == 10 {
						break
					}
					t.Errorf("differs: %v", d)
				}
			default:
				t.Logf("not exact (%s); scope paths agree on %.3f%% of %d bytes", known_.reason, 100*share, total)
				if share < known_.floor {
					t.Errorf("scope paths agree on only %.3f%% of code bytes, below this binary's floor %.1f%%", 100*share, 100*known_.floor)
				}
				if known_.ignoreNames {
					blankCalleeNames(ref.Root)
					blankCalleeNames(got.Root)
					same, total = diff.PathAgreement(ref, got)
					share = float64(same) / float64(max(total, 1))
					t.Logf("with callee names ignored: %.3f%%", 100*share)
				}
				if share < 0.995 {
					t.Errorf("scope paths agree on only %.3f%% of code bytes (want >= 99.5%%)", 100*share)
				}
			}
		})
	}
	t.Logf("%d of %d reference binaries match exactly", exact, len(cases))
}

// TestDeterministic checks that the worker count, of loading and of
// analysis, does not change a byte. The corpus binaries have one
// compilation unit each; libstdc++'s debug build (when installed) has
// hundreds, which the loader walks in parallel and merges.
func TestDeterministic(t *testing.T) {
	for _, bin := range []string{"../../shared/hpcstruct-refs/bin/tmpl-gcc12-O2", "../testdata/bin/tmpl-clang14-O2",
		"../../shared/hpcstruct-refs-arch/bin/tmpl-ppc64le-gcc12-O2",
		"/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30"} {
		if _, err := os.Stat(bin); err != nil {
			continue
		}
		a, b := compatStructure(t, bin, 1), compatStructure(t, bin, 3)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: outputs with 1 and 3 workers differ", bin)
		}
	}
}

// blankCalleeNames drops the names of inlined callees, for comparisons that
// must not depend on the demangler.
func blankCalleeNames(n *structure.Node) {
	if n.Tag == "A" {
		if v, _ := n.Get("n"); v != "" && v != "<inline>" {
			n.Set("n", "-")
		}
	}
	for _, c := range n.Children {
		blankCalleeNames(c)
	}
}

// sameRangeless drops the elements without addresses that both documents
// hold at one path: HPCToolkit's comparison rejects such an element, and
// hpcstruct writes one (an empty F for a ppc64 local entry's file in
// tmpl-ppc64le-gcc12-O2), which compat mode reproduces. Paired, they are
// compared as any other element. It reports whether no difference is left.
func sameRangeless(diffs []diff.Difference) (bool, []diff.Difference) {
	side := map[string]int{}
	for _, d := range diffs {
		if d.Kind == diff.DiffNoRange {
			if d.B != "" {
				side[d.Path] |= 2
			} else {
				side[d.Path] |= 1
			}
		}
	}
	var out []diff.Difference
	for _, d := range diffs {
		if d.Kind != diff.DiffNoRange || side[d.Path] != 3 {
			out = append(out, d)
		}
	}
	return len(out) == 0, out
}

// TestCUDAReferencesCovered: every CUDA structure file of ../shared,
// hpcstruct's without --gpucfg and with it ("+gpucfg" in its name), has
// its cubin among refCases, so that TestHPCStructReferences compares it
// exactly, the latter with --gpucfg.
func TestCUDAReferencesCovered(t *testing.T) {
	have := map[string]bool{}
	for _, c := range refCases(t) {
		have[c.ref] = c.gpucfg == strings.Contains(filepath.Base(c.ref), "+gpucfg")
	}
	n, gpucfg := 0, 0
	for _, dir := range []string{"../../shared/hpctoolkit-tests", "../../shared/hpctoolkit-cuda"} {
		refs, _ := filepath.Glob(filepath.Join(dir, "struct", "*-sm_*.hpcstruct"))
		for _, r := range refs {
			n++
			if strings.Contains(filepath.Base(r), "+gpucfg") {
				gpucfg++
			}
			if !have[r] {
				t.Errorf("%s: no cubin beside it is compared, or not in its mode", r)
			}
		}
	}
	if n == 0 {
		testenv.Absent(t, "no CUDA structure files in ../../shared")
	}
	t.Logf("%d CUDA structure files compared, %d of them with --gpucfg", n, gpucfg)
}
