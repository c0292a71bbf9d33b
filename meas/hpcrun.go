// Package meas reads HPCToolkit measurement directories: the load maps
// of the .hpcrun profiles hpcrun writes, and from them the load modules
// whose structure hpcprof wants (hpcstruct's measurement-directory mode).
package meas

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// The .hpcrun layout (format 04.00, big-endian): a header, then sections
// that each start at a multiple of 1024 bytes; a footer of 14 unsigned
// 64-bit words at the end gives each section's start and end and a magic
// number.
const (
	magic       = "HPCRUN-profile____"
	footerWords = 14
	footerSize  = footerWords * 8
	footerMagic = 0x48504352554E736D // "HPCRUNsm"
	// Footer word indices of the load map's bounds.
	loadMapStart, loadMapEnd = 2, 3
	// maxEntries bounds the load map so a corrupt count cannot allocate
	// without limit; real maps hold tens to a few thousand modules.
	maxEntries = 1 << 20
)

// FlagAnalyze is the load-map flag hpcrun sets on a module it saw samples
// or unwinding in: the modules worth a structure file.
const FlagAnalyze = 1

// Entry is one load module of a profile's load map.
type Entry struct {
	ID    uint16
	Path  string
	Flags uint64
}

// ReadLoadMap returns the load map of the .hpcrun file name.
func ReadLoadMap(name string) ([]Entry, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	es, err := readLoadMap(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return es, nil
}

func readLoadMap(r io.ReaderAt, size int64) ([]Entry, error) {
	head := make([]byte, len(magic)+5)
	if _, err := r.ReadAt(head, 0); err != nil || string(head[:len(magic)]) != magic {
		return nil, fmt.Errorf("not an hpcrun profile")
	}
	if size < int64(len(head))+footerSize {
		return nil, fmt.Errorf("truncated hpcrun profile (no footer)")
	}
	var foot [footerWords]uint64
	if err := binary.Read(io.NewSectionReader(r, size-footerSize, footerSize), binary.BigEndian, &foot); err != nil {
		return nil, fmt.Errorf("reading the footer: %w", err)
	}
	if foot[footerWords-1] != footerMagic {
		return nil, fmt.Errorf("hpcrun profile version %q: no footer (unfinished or truncated file?)", head[len(magic):])
	}
	lo, hi := foot[loadMapStart], foot[loadMapEnd]
	if lo > hi || hi > uint64(size) {
		return nil, fmt.Errorf("load map bounds [%#x, %#x) outside the file", lo, hi)
	}
	buf := make([]byte, hi-lo)
	if _, err := r.ReadAt(buf, int64(lo)); err != nil {
		return nil, fmt.Errorf("reading the load map: %w", err)
	}
	es, n, err := parseLoadMap(buf)
	if err != nil {
		return nil, fmt.Errorf("load map at %#x: %w", lo, err)
	}
	if n != len(buf) {
		// hpcprof and hpcstruct reject such a map too.
		return nil, fmt.Errorf("load map at %#x: ends at %#x, the footer says %#x", lo, lo+uint64(n), hi)
	}
	return es, nil
}

// parseLoadMap reads a count and that many entries (u16 id, u32-length
// path, u64 flags) and returns them with the bytes consumed.
func parseLoadMap(b []byte) ([]Entry, int, error) {
	rd := bytes.NewReader(b)
	var count uint32
	if err := binary.Read(rd, binary.BigEndian, &count); err != nil {
		return nil, 0, fmt.Errorf("no entry count")
	}
	if count > maxEntries {
		return nil, 0, fmt.Errorf("%d entries (corrupt count?)", count)
	}
	var es []Entry
	for i := uint32(0); i < count; i++ {
		var e Entry
		var n uint32
		if binary.Read(rd, binary.BigEndian, &e.ID) != nil || binary.Read(rd, binary.BigEndian, &n) != nil {
			return nil, 0, fmt.Errorf("entry %d truncated", i)
		}
		if int64(n) > int64(rd.Len()) {
			return nil, 0, fmt.Errorf("entry %d: path of %d bytes past the end", i, n)
		}
		p := make([]byte, n)
		rd.Read(p)
		e.Path = string(p)
		if binary.Read(rd, binary.BigEndian, &e.Flags) != nil {
			return nil, 0, fmt.Errorf("entry %d truncated", i)
		}
		es = append(es, e)
	}
	return es, len(b) - rd.Len(), nil
}
