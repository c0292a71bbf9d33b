package inputs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
)

// The plans that split a run's inputs between shards.
const (
	// PlanCost deals the inputs, largest estimated analysis cost first,
	// each to the shard with the least cost so far (LPT), so that no
	// shard waits long for another.
	PlanCost = "cost"
	// PlanPath puts each input in the shard its path hashes to: an input
	// added or removed moves no other, but sizes are ignored.
	PlanPath = "path"
)

// Shard is part K of N of a run (1 <= K <= N), split by Plan (PlanCost
// when empty).
type Shard struct {
	K, N int
	Plan string
}

// ParseShard reads "K/N".
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || k < 1 || k > n {
		return Shard{}, fmt.Errorf("--shard %q: want K/N with 1 <= K <= N, or auto", s)
	}
	return Shard{K: k, N: n}, nil
}

// ParsePlan checks a plan's name.
func ParsePlan(s string) (string, error) {
	if s != PlanCost && s != PlanPath {
		return "", fmt.Errorf("--shard-plan %q: want %s or %s", s, PlanCost, PlanPath)
	}
	return s, nil
}

func (s Shard) plan() string {
	if s.Plan == "" {
		return PlanCost
	}
	return s.Plan
}

// Assignment is what a plan made of a run's inputs.
type Assignment struct {
	Plan string
	// Owner is the shard (1..N) of each input, in the inputs' order.
	Owner []int
	// Cost is the estimate each input was dealt by (PlanCost only).
	Cost []int64
	// Digest names the plan, N and what it was made from (each input's
	// path below its operand and its cost): tasks whose digests agree
	// split one list alike, so together they hold every input once.
	Digest string
}

// Assign splits ins between the N shards. Every task of a run computes
// the same assignment from the same list, whatever the machine or where
// the tree is checked out: it depends only on each input's Rel, its
// place in the list and, for PlanCost, its estimated cost (see
// EstimateCost; debugDirs are where separate debug files are looked for,
// as the loader looks).
func (s Shard) Assign(ins []Input, debugDirs []string) Assignment {
	a := Assignment{Plan: s.plan(), Owner: make([]int, len(ins))}
	n := max(s.N, 1)
	switch a.Plan {
	case PlanPath:
		for i, in := range ins {
			a.Owner[i] = pathShard(in.Rel, n)
		}
	default:
		a.Cost = make([]int64, len(ins))
		for i, in := range ins {
			a.Cost[i] = EstimateCost(in, debugDirs)
		}
		a.Owner = lpt(ins, a.Cost, n)
	}
	a.Digest = digest(a, ins, n)
	return a
}

// pathShard is the shard (1..n) of the FNV-1a hash of rel.
func pathShard(rel string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(rel))
	return int(h.Sum64()%uint64(n)) + 1
}

// lpt deals the inputs, by cost, largest first (ties: by Rel, then place
// in the list), each to the least-loaded shard (ties: the lowest).
func lpt(ins []Input, cost []int64, n int) []int {
	order := make([]int, len(ins))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool {
		i, j := order[x], order[y]
		if cost[i] != cost[j] {
			return cost[i] > cost[j]
		}
		return ins[i].Rel < ins[j].Rel
	})
	load := make([]int64, n)
	owner := make([]int, len(ins))
	for _, i := range order {
		best := 0
		for k := 1; k < n; k++ {
			if load[k] < load[best] {
				best = k
			}
		}
		load[best] += cost[i]
		owner[i] = best + 1
	}
	return owner
}

// digest is the first 16 hex digits of the SHA-256 of the plan, N and
// each input's Rel and cost, in order.
func digest(a Assignment, ins []Input, n int) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s %d\n", a.Plan, n)
	for i, in := range ins {
		var c int64
		if a.Cost != nil {
			c = a.Cost[i]
		}
		fmt.Fprintf(h, "%q %d\n", in.Rel, c)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Holds reports whether input i of the assignment is in shard s.
func (s Shard) Holds(a Assignment, i int) bool {
	return s.N <= 1 || a.Owner[i] == s.K
}

// Filter keeps the inputs of shard s.
func (s Shard) Filter(ins []Input, debugDirs []string) []Input {
	a := s.Assign(ins, debugDirs)
	var out []Input
	for i, in := range ins {
		if s.Holds(a, i) {
			out = append(out, in)
		}
	}
	return out
}
