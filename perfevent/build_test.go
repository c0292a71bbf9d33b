package perfevent

import (
	"encoding/binary"
)

// rec lays out a record: its header and body.
func rec(typ uint32, misc uint16, body []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, typ)
	b = binary.LittleEndian.AppendUint16(b, misc)
	b = binary.LittleEndian.AppendUint16(b, uint16(8+len(body)))
	return append(b, body...)
}

// eventDescFeature lays out HEADER_EVENT_DESC for events.
func eventDescFeature(events ...*Event) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(events)))
	b = binary.LittleEndian.AppendUint32(b, AttrSizeVer8)
	for _, e := range events {
		b = AppendAttr(b, e.Attr)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(e.IDs)))
		b = append(b, HeaderString(e.Name)...)
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
