package inputs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"bloop/internal/testenv"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{{"1/1", true}, {"3/4", true}, {"0/4", false}, {"5/4", false}, {"1/0", false}, {"1", false}, {"a/b", false}, {"-1/2", false}} {
		if _, err := ParseShard(tc.in); (err == nil) != tc.ok {
			t.Errorf("ParseShard(%q): %v", tc.in, err)
		}
	}
	for _, tc := range []struct {
		in string
		ok bool
	}{{"cost", true}, {"path", true}, {"", false}, {"size", false}} {
		if _, err := ParsePlan(tc.in); (err == nil) != tc.ok {
			t.Errorf("ParsePlan(%q): %v", tc.in, err)
		}
	}
}

// synthetic is n inputs that are not files: each costs its Size.
func synthetic(n int) []Input {
	var ins []Input
	for i := range n {
		// Sizes over three orders of magnitude, as a distribution's.
		ins = append(ins, Input{Path: fmt.Sprintf("/nonexistent/lib%03d.so", i), Operand: "/nonexistent",
			Rel: fmt.Sprintf("lib%03d.so", i), Size: int64(1000 + (i*7919)%997*(1+i%5*250))})
	}
	return ins
}

// TestShardPlans checks both plans put every input in exactly one shard,
// that the place of the tree does not change a plan, and that the cost
// plan balances what the path hash does not.
func TestShardPlans(t *testing.T) {
	ins := synthetic(200)
	for _, plan := range []string{PlanCost, PlanPath} {
		for _, n := range []int{1, 2, 4, 7} {
			seen := map[string]int{}
			loads := make([]int64, n)
			var digests []string
			for k := 1; k <= n; k++ {
				s := Shard{K: k, N: n, Plan: plan}
				a := s.Assign(ins, nil)
				digests = append(digests, a.Digest)
				part := s.Filter(ins, nil)
				if len(part) == 0 {
					t.Errorf("%s %d/%d: empty", plan, k, n)
				}
				for _, in := range part {
					seen[in.Rel]++
					loads[k-1] += in.Size
				}
			}
			for _, in := range ins {
				if seen[in.Rel] != 1 {
					t.Errorf("%s N=%d: %s in %d shards", plan, n, in.Rel, seen[in.Rel])
				}
			}
			for _, d := range digests {
				if d != digests[0] || len(d) != 16 {
					t.Errorf("%s N=%d: tasks disagree on the plan: %q", plan, n, digests)
				}
			}
			var total, most int64
			for _, l := range loads {
				total += l
				most = max(most, l)
			}
			ratio := float64(most) * float64(n) / float64(total)
			t.Logf("%s N=%d: largest shard %.3f x the mean", plan, n, ratio)
			if plan == PlanCost && ratio > 1.05 {
				t.Errorf("cost plan N=%d: largest shard %.3f x the mean", n, ratio)
			}
		}
	}
	// Another checkout of the same tree: the same plan.
	moved := make([]Input, len(ins))
	for i, in := range ins {
		in.Operand = "/home/u/elsewhere"
		in.Path = filepath.Join(in.Operand, in.Rel)
		moved[i] = in
	}
	for _, plan := range []string{PlanCost, PlanPath} {
		a := Shard{K: 1, N: 4, Plan: plan}.Assign(ins, nil)
		b := Shard{K: 1, N: 4, Plan: plan}.Assign(moved, nil)
		if fmt.Sprint(a.Owner) != fmt.Sprint(b.Owner) || a.Digest != b.Digest {
			t.Errorf("%s: the tree's place changed the plan", plan)
		}
	}
	// Another list is another digest, so tasks given different trees
	// can tell.
	if a, b := (Shard{K: 1, N: 4}).Assign(ins, nil), (Shard{K: 1, N: 4}).Assign(ins[1:], nil); a.Digest == b.Digest {
		t.Error("two lists, one digest")
	}
}

// TestShardTies checks that inputs of equal cost are dealt by path, not
// by the order they were listed in.
func TestShardTies(t *testing.T) {
	ins := []Input{{Rel: "d", Size: 5}, {Rel: "b", Size: 5}, {Rel: "c", Size: 5}, {Rel: "a", Size: 5}}
	for i := range ins {
		ins[i].Path = "/nonexistent/" + ins[i].Rel
	}
	a := Shard{K: 1, N: 2}.Assign(ins, nil)
	got := map[string]int{}
	for i, in := range ins {
		got[in.Rel] = a.Owner[i]
	}
	if want := map[string]int{"a": 1, "b": 2, "c": 1, "d": 2}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ties dealt %v, want %v", got, want)
	}
}

// TestEstimateCost checks the estimate reads the corpus's binaries as it
// should: DWARF adds to the cost, a separate debug file found as the
// loader finds it counts as the binary's own DWARF, and a file that is
// not ELF costs its size.
func TestEstimateCost(t *testing.T) {
	const dir = "../testdata/bin/"
	with := Input{Path: dir + "loops-gcc12-O2", Rel: "a"}
	without := Input{Path: dir + "loops-gcc12-O2nodebug", Rel: "b"}
	cw, cn := EstimateCost(with, nil), EstimateCost(without, nil)
	if cn <= 0 || cw <= cn {
		t.Errorf("with DWARF %d, without %d", cw, cn)
	}
	junk := filepath.Join(t.TempDir(), "junk")
	if err := os.WriteFile(junk, []byte(strings.Repeat("x", 1234)), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := EstimateCost(Input{Path: junk, Size: 1234}, nil); c != 1234 {
		t.Errorf("a file not ELF costs %d", c)
	}
	// A stripped copy whose DWARF is in a debug file that the loader
	// finds by .gnu_debuglink beside it.
	objcopy := testenv.Need(t, "objcopy")
	tmp := t.TempDir()
	dbg, stripped := filepath.Join(tmp, "prog.debug"), filepath.Join(tmp, "prog")
	for _, args := range [][]string{
		{"--only-keep-debug", with.Path, dbg},
		{"--strip-debug", "--add-gnu-debuglink=" + dbg, with.Path, stripped},
	} {
		if out, err := exec.Command(objcopy, args...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %q: %v\n%s", args, err, out)
		}
	}
	found := EstimateCost(Input{Path: stripped}, nil)
	os.Remove(dbg)
	alone := EstimateCost(Input{Path: stripped}, nil)
	if alone <= 0 || found <= alone {
		t.Errorf("debug file beside the binary not counted: %d with it, %d without", found, alone)
	}
}
