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

	"bloop/diff"
	"bloop/internal/testenv"
	"bloop/structure"
)

// corpusSums reads ../shared/hpcstruct-corpus/SHA256SUMS: the hashes of the
// corpus binaries real hpcstruct was run on, by path under testdata/.
func corpusSums(t *testing.T) map[string]string {
	f, err := os.Open("../../shared/hpcstruct-corpus/SHA256SUMS")
	if err != nil {
		testenv.Absent(t, "../../shared/hpcstruct-corpus not present")
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
// reproduce exactly; each is still compared and its agreement logged. One
// that matches must leave the list. Empty since issue 21.
var corpusPending = map[string]bool{}

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
				t.Fatal(err)
			}
			if h := sha256.Sum256(data); hex.EncodeToString(h[:]) != sums[p] {
				t.Skipf("%s was rebuilt: not the bytes hpcstruct read", bin)
			}
			compared++
			got, err := structure.Parse(bytes.NewReader(compatStructure(t, bin, 2)), p)
			if err != nil {
				t.Fatalf("our output does not parse: %v", err)
			}
			want, err := structure.ParseFile(ref)
			if err != nil {
				t.Fatal(err)
			}
			eq, diffs := diff.Equal(want, got)
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
			same, total := diff.PathAgreement(want, got)
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
