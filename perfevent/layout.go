package perfevent

import (
	"encoding/binary"
	"slices"
)

// Writers of the layouts Open reads.

// HeaderString lays out a perf_header_string: a length and the string
// NUL-padded to a multiple of 8 bytes.
func HeaderString(s string) []byte {
	n := (len(s) + 8) &^ 7
	b := binary.LittleEndian.AppendUint32(nil, uint32(n))
	b = append(b, s...)
	return append(b, make([]byte, n-len(s))...)
}

// CmdlineFeature lays out HEADER_CMDLINE.
func CmdlineFeature(args ...string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(args)))
	for _, a := range args {
		b = append(b, HeaderString(a)...)
	}
	return b
}

// LayoutFile lays out a perf.data file: the header, the attributes (all
// of AttrSizeVer8 bytes) and their ids, the data (records) and the
// feature sections (by feature id), as perf writes them; the inverse of
// Open, for tests and tools that write perf.data files.
func LayoutFile(events []*Event, data []byte, features map[int][]byte) []byte {
	le := binary.LittleEndian
	const attrEntry = AttrSizeVer8 + fileAttrExtra
	attrsOff := uint64(fileHeaderSize)
	idsOff := attrsOff + uint64(len(events))*attrEntry
	var attrs, ids []byte
	for _, e := range events {
		a := e.Attr
		a.Size = AttrSizeVer8
		attrs = AppendAttr(attrs, a)
		attrs = le.AppendUint64(attrs, idsOff+uint64(len(ids)))
		attrs = le.AppendUint64(attrs, uint64(8*len(e.IDs)))
		for _, id := range e.IDs {
			ids = le.AppendUint64(ids, id)
		}
	}
	dataOff := idsOff + uint64(len(ids))
	h := append([]byte(Magic), make([]byte, fileHeaderSize-8)...)
	le.PutUint64(h[8:], fileHeaderSize)
	le.PutUint64(h[16:], attrEntry)
	le.PutUint64(h[24:], attrsOff)
	le.PutUint64(h[32:], uint64(len(attrs)))
	le.PutUint64(h[40:], dataOff)
	le.PutUint64(h[48:], uint64(len(data)))
	var feats []int
	for id := range features {
		feats = append(feats, id)
		h[72+id/8] |= 1 << (id % 8)
	}
	slices.Sort(feats)
	out := append(append(append(h, attrs...), ids...), data...)
	tableOff := uint64(len(out))
	sectionOff := tableOff + uint64(16*len(feats))
	var table, sections []byte
	for _, id := range feats {
		table = le.AppendUint64(table, sectionOff+uint64(len(sections)))
		table = le.AppendUint64(table, uint64(len(features[id])))
		sections = append(sections, features[id]...)
	}
	return append(append(out, table...), sections...)
}
