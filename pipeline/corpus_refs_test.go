package pipeline

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"bloop/golden"
)

// corpusSums reads ../shared/hpcstruct-corpus/SHA256SUMS: the hashes of the
// corpus binaries real hpcstruct was run on, by path under testdata/.
func corpusSums(t *testing.T) map[string]string {
	f, err := os.Open("../../shared/hpcstruct-corpus/SHA256SUMS")
	if err != nil {
		t.Skip("../../shared/hpcstruct-corpus not present")
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, path, ok := strings.Cut(sc.Text(), "  ")
		if ok {
			sums[path] = sum
		}
	}
	return sums
}

// corpusPending lists the corpus binaries compat mode does not yet
// reproduce exactly (issue 21); each is still compared and its agreement
// logged. One that matches must leave the list. The C++ ones (stl, tmpl)
// left here match exactly once branch i21-loops is merged too (checked on a
// merge of both: 233 of 233): their last differences are the nesting of
// irreducible loops, which follows Dyninst's edge order, and the local
// procedures Dyninst finds never return, both that branch's rules.
var corpusPending = map[string]bool{
	"bin-arm64/irred-clang14-O0":      true,
	"bin-arm64/irred-gcc12-O0":        true,
	"bin-arm64/noreturn-gcc12-O2":     true,
	"bin-arm64/noreturn-gcc12-O3":     true,
	"bin-arm64/stl-clang14-O3":        true, // irreducible loops nest by Dyninst's edge order (i21-loops 6bb561c): std::__rotate
	"bin-arm64/stl-gcc12-O3":          true, // irreducible loops nest by Dyninst's edge order (i21-loops 6bb561c): sorted_median, window_max_sum
	"bin-arm64/switch-clang14-O0":     true,
	"bin-arm64/switch-clang14-O2":     true,
	"bin-arm64/switch-clang14-O3":     true,
	"bin-ppc64le/irred-clang14-O0":    true,
	"bin-ppc64le/irred-gcc12-O0":      true,
	"bin-ppc64le/irred-gcc12-O2":      true,
	"bin-ppc64le/irred-gcc12-O3":      true,
	"bin-ppc64le/noreturn-clang14-O0": true,
	"bin-ppc64le/noreturn-gcc12-O0":   true,
	"bin-ppc64le/noreturn-gcc12-O2":   true,
	"bin-ppc64le/noreturn-gcc12-O3":   true,
	"bin-ppc64le/stl-clang14-O2":      true, // i21-loops through 2395837 (Dyninst's inferred noreturn procedures; its 6bb561c alone leaves __make_heap's loops)
	"bin-ppc64le/stl-clang14-O3":      true, // i21-loops through 2395837 (Dyninst's inferred noreturn procedures)
	"bin-ppc64le/stl-gcc12-O3":        true, // irreducible loops nest by Dyninst's edge order (i21-loops 6bb561c): __merge_sort_with_buffer
	"bin-ppc64le/tmpl-clang14-O2":     true, // Dyninst's inferred noreturn procedures (i21-loops 2395837)
	"bin-ppc64le/tmpl-clang14-O3":     true, // Dyninst's inferred noreturn procedures (i21-loops 2395837)
	"bin/irred-clang14-O0":            true,
	"bin/irred-gcc12-O0":              true,
	"bin/licm-clang14-O2g1":           true,
	"bin/noreturn-clang14-O0":         true,
	"bin/noreturn-gcc12-O0":           true,
	"bin/stl-clang14-O2":              true, // irreducible loops nest by Dyninst's edge order (i21-loops 6bb561c): __merge_adaptive
	"bin/stl-clang14-O2g1":            true, // irreducible loops nest by Dyninst's edge order (i21-loops 6bb561c): __merge_adaptive
	"bin/stl-clang14-O2nodebug":       true, // irreducible loops nest by Dyninst's edge order (i21-loops 6bb561c): __merge_adaptive
	"bin/stl-clang14-O3":              true, // irreducible loops nest by Dyninst's edge order (i21-loops 6bb561c): __merge_adaptive
	"bin/stl-gcc12-O3":                true, // irreducible loops nest by Dyninst's edge order (i21-loops 6bb561c): __merge_sort_with_buffer
}

// TestHPCStructCorpus compares compat mode with the structure files real
// hpcstruct wrote for every binary of the project's corpus (three
// architectures, each compiler's default DWARF version), under HPCToolkit's
// canonical comparison. A binary whose bytes are not those hpcstruct read
// is skipped: its reference describes other code.
func TestHPCStructCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	sums := corpusSums(t)
	paths := make([]string, 0, len(sums))
	for p := range sums {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	exact, compared := 0, 0
	for _, p := range paths {
		bin := filepath.Join("../testdata", p)
		ref := filepath.Join("../../shared/hpcstruct-corpus", p+".hpcstruct")
		t.Run(p, func(t *testing.T) {
			data, err := os.ReadFile(bin)
			if err != nil {
				t.Skip(err)
			}
			if h := sha256.Sum256(data); hex.EncodeToString(h[:]) != sums[p] {
				t.Skipf("%s was rebuilt: not the bytes hpcstruct read", bin)
			}
			compared++
			got, err := golden.Parse(bytes.NewReader(structure(t, bin, 2)), p)
			if err != nil {
				t.Fatalf("our output does not parse: %v", err)
			}
			want, err := golden.ParseFile(ref)
			if err != nil {
				t.Fatal(err)
			}
			eq, diffs := golden.Equal(want, got)
			if !eq {
				eq, diffs = sameRangeless(diffs)
			}
			if eq {
				exact++
				if corpusPending[p] {
					t.Errorf("now matches exactly: remove it from corpusPending")
				}
				return
			}
			same, total := golden.PathAgreement(want, got)
			t.Logf("scope paths agree on %.2f%% of %d bytes", 100*float64(same)/float64(max(total, 1)), total)
			report := t.Errorf
			if corpusPending[p] {
				report = t.Logf
			}
			for i, d := range diffs {
				if i == 6 {
					t.Logf("... %d differences", len(diffs))
					break
				}
				report("differs: %v", d)
			}
		})
	}
	t.Logf("%d of %d corpus binaries match hpcstruct exactly", exact, compared)
}
