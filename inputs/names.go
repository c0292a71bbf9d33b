package inputs

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// OutputNames names each binary input's structure file below an output
// directory: its path relative to its operand (the base name for a file
// operand) followed by ext. When two inputs of the run would get the same
// name, each of them gets "@" and the first 8 hex digits of the SHA-256
// of its path as found before ext. Names are made from the whole run's
// inputs before sharding, so a shard, and a rerun, names a file as the
// whole run does. Measurement directories get "" (their files go to
// their own structs directory).
func OutputNames(ins []Input, ext string) []string {
	count := map[string]int{}
	for _, in := range ins {
		if in.Kind == Binary {
			count[in.Rel]++
		}
	}
	names := make([]string, len(ins))
	for i, in := range ins {
		if in.Kind != Binary {
			continue
		}
		n := in.Rel
		if count[n] > 1 {
			sum := sha256.Sum256([]byte(in.Path))
			n += "@" + hex.EncodeToString(sum[:4])
		}
		names[i] = filepath.FromSlash(n) + ext
	}
	return names
}
