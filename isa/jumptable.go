package isa

// maxTable bounds a jump table whose size no compare gives.
const maxTable = 4096

// readEntries reads a jump table of size-byte entries at table; target
// turns an entry's bytes into the address it jumps to. With a bound from
// the compare that guards the index, exactly bound entries are read and
// those the procedure cannot jump to are skipped; without one, entries
// are read while they land on instruction starts of the procedure.
func readEntries(mem Memory, table uint64, size, bound int, target func([]byte) uint64, to Targets) []uint64 {
	limit := bound
	if limit == 0 {
		limit = maxTable
	}
	var out []uint64
	for k := 0; k < limit; k++ {
		b := mem.ReadData(table+uint64(k*size), size)
		if b == nil {
			break
		}
		t := target(b)
		if bound == 0 && !(to.Valid(t) && to.Start(t)) {
			break
		}
		if !to.Valid(t) {
			continue
		}
		out = append(out, t)
	}
	return out
}
