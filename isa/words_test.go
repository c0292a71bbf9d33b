package isa

import "encoding/binary"

// words lays out fixed-width instruction words in little-endian order.
func words(ws ...uint32) []byte {
	var b []byte
	for _, w := range ws {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b
}
