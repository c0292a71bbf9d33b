package perfevent

import (
	"encoding/binary"
	"slices"
)

// rec lays out a record: its header and body.
func rec(typ uint32, misc uint16, body []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, typ)
	b = binary.LittleEndian.AppendUint16(b, misc)
	b = binary.LittleEndian.AppendUint16(b, uint16(8+len(body)))
	return append(b, body...)
}

// perfString lays out a perf_header_string: a length and the string
// NUL-padded to a multiple of 8 bytes.
func perfString(s string) []byte {
	n := (len(s) + 8) &^ 7
	b := binary.LittleEndian.AppendUint32(nil, uint32(n))
	b = append(b, s...)
	return append(b, make([]byte, n-len(s))...)
}

// cmdlineFeature lays out HEADER_CMDLINE.
func cmdlineFeature(args ...string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(args)))
	for _, a := range args {
		b = append(b, perfString(a)...)
	}
	return b
}

// eventDescFeature lays out HEADER_EVENT_DESC for events.
func eventDescFeature(events ...*Event) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(events)))
	b = binary.LittleEndian.AppendUint32(b, AttrSizeVer8)
	for _, e := range events {
		b = AppendAttr(b, e.Attr)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(e.IDs)))
		b = append(b, perfString(e.Name)...)
		for _, id := range e.IDs {
			b = binary.LittleEndian.AppendUint64(b, id)
		}
	}
	return b
}

// buildIDRecord lays out a build_id_event (a record of HEADER_BUILD_ID,
// or of a stream).
func buildIDRecord(typ uint32, pid uint32, id []byte, path string) []byte {
	body := binary.LittleEndian.AppendUint32(nil, pid)
	padded := make([]byte, 24)
	copy(padded, id)
	padded[20] = byte(len(id))
	body = append(append(body, padded...), w(path)...)
	return rec(typ, MiscUser|miscBuildIDSized, body)
}

// perfFile lays out a perf.data file: the header, the attributes (all of
// AttrSizeVer8 bytes) and their ids, the data and the feature sections.
func perfFile(events []*Event, data []byte, features map[int][]byte) []byte {
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

// pipeStream lays out a stream: its 16-byte header and the records.
func pipeStream(records ...[]byte) []byte {
	b := append([]byte(Magic), make([]byte, 8)...)
	binary.LittleEndian.PutUint64(b[8:], pipeHeaderSize)
	for _, r := range records {
		b = append(b, r...)
	}
	return b
}

// attrRecord lays out a HEADER_ATTR record of a stream.
func attrRecord(e *Event) []byte {
	a := e.Attr
	a.Size = AttrSizeVer8
	b := AppendAttr(nil, a)
	for _, id := range e.IDs {
		b = binary.LittleEndian.AppendUint64(b, id)
	}
	return rec(RecordHeaderAttr, 0, b)
}

// featureRecord lays out a HEADER_FEATURE record of a stream.
func featureRecord(id int, data []byte) []byte {
	return rec(RecordHeaderFeature, 0, append(binary.LittleEndian.AppendUint64(nil, uint64(id)), data...))
}

// nameRecord lays out the EVENT_UPDATE record that names an event.
func nameRecord(id uint64, name string) []byte {
	return rec(RecordEventUpdate, 0, w(eventUpdateName, id, name))
}
