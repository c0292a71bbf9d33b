package inputs

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Shard is part K of N of a run (1 <= K <= N).
type Shard struct{ K, N int }

// ParseShard reads "K/N".
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || k < 1 || k > n {
		return Shard{}, fmt.Errorf("--shard %q: want K/N with 1 <= K <= N", s)
	}
	return Shard{k, n}, nil
}

// Holds reports whether the input belongs to shard K of N: by a hash of
// its path relative to its operand (FNV-1a, 64 bits), so that N machines
// given the same tree, wherever it is checked out, split it with no
// coordinator and every input falls in exactly one shard.
func (s Shard) Holds(in Input) bool {
	if s.N <= 1 {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(in.Rel))
	return h.Sum64()%uint64(s.N) == uint64(s.K-1)
}

// Filter keeps the inputs of shard s.
func (s Shard) Filter(ins []Input) []Input {
	var out []Input
	for _, in := range ins {
		if s.Holds(in) {
			out = append(out, in)
		}
	}
	return out
}
