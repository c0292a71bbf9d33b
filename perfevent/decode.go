package perfevent

import (
	"encoding/binary"
	"fmt"
)

// Event is one perf event: its attribute, the ids its records carry
// (one per CPU or thread it was opened on) and its name.
type Event struct {
	Attr Attr
	IDs  []uint64
	Name string
}

// Decoder decodes the records of a set of events. With several events,
// each record names its event by an id (SampleIdentifier or SampleID)
// at a place every event's attribute must agree on, as perf requires.
// A Decoder reuses its records (see Record) and is not safe for
// concurrent use.
type Decoder struct {
	events      []*Event
	byID        map[uint64]*Event
	sampleWord  int // the id's word in a sample, -1 for none
	trailerWord int // the id's word from the end of a sample_id trailer, -1 for none
	unknown     map[uint32]int

	sample   Sample
	mmap     Mmap
	comm     Comm
	task     Task
	lost     Lost
	throttle Throttle
	unk      Unknown
}

// NewDecoder returns a decoder for records of the events.
func NewDecoder(events ...*Event) (*Decoder, error) {
	d := &Decoder{byID: map[uint64]*Event{}, unknown: map[uint32]int{}}
	for _, e := range events {
		if err := d.AddEvent(e); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// AddEvent adds an event (perf's pipe mode describes events as it goes).
// It fails when the records of the events could not be told apart.
func (d *Decoder) AddEvent(e *Event) error {
	sw, tw := sampleIDWord(e.Attr.SampleType), trailerIDWord(&e.Attr)
	if len(d.events) > 0 {
		first := d.events[0]
		if sw != d.sampleWord || tw != d.trailerWord {
			return fmt.Errorf("events %s and %s put their ids in different places (sample types %#x and %#x): their records cannot be told apart",
				first.label(), e.label(), first.Attr.SampleType, e.Attr.SampleType)
		}
		if sw < 0 {
			return fmt.Errorf("events %s and %s: samples carry no event id (sample type %#x), so they cannot be told apart",
				first.label(), e.label(), e.Attr.SampleType)
		}
	}
	for _, id := range e.IDs {
		if other := d.byID[id]; other != nil && other != e {
			return fmt.Errorf("id %d belongs to two events, %s and %s", id, other.label(), e.label())
		}
	}
	for _, id := range e.IDs {
		d.byID[id] = e
	}
	d.events = append(d.events, e)
	d.sampleWord, d.trailerWord = sw, tw
	return nil
}

// label names an event in errors.
func (e *Event) label() string {
	if e.Name != "" {
		return fmt.Sprintf("%q", e.Name)
	}
	return fmt.Sprintf("type %d config %#x", e.Attr.Type, e.Attr.Config)
}

// Events returns the events in the order they were added.
func (d *Decoder) Events() []*Event { return d.events }

// EventByID returns the event with the id, nil if none has it.
func (d *Decoder) EventByID(id uint64) *Event { return d.byID[id] }

// UnknownTypes counts the records of each type Decode returned as
// *Unknown.
func (d *Decoder) UnknownTypes() map[uint32]int { return d.unknown }

// Decode decodes one record: h is its header and body the h.Size-8
// bytes after it. Records of types it does not know come back as
// *Unknown, counted; errors are for records their own type's layout
// does not fit, and say which field and where.
func (d *Decoder) Decode(h Header, body []byte) (Record, error) {
	if h.Type == RecordSample {
		return d.decodeSample(h, body)
	}
	switch h.Type {
	case RecordMmap, RecordMmap2, RecordComm, RecordFork, RecordExit, RecordLost,
		RecordLostSamples, RecordThrottle, RecordUnthrottle:
	default:
		d.unknown[h.Type]++
		d.unk = Unknown{Header: h, Body: body}
		return &d.unk, nil
	}
	e := d.trailerEvent(body)
	c := &cursor{b: body}
	var id Trailer
	if e != nil {
		if n := e.Attr.idTrailerSize(); n > 0 {
			if n > len(body) {
				return nil, fmt.Errorf("%s record of %d bytes is shorter than its sample_id fields (%d bytes)", typeName(h.Type), h.Size, n)
			}
			id = parseSampleID(&e.Attr, body[len(body)-n:])
			c.b = body[:len(body)-n]
		}
	}
	rec := d.decodeOther(h, id, c)
	if c.err != nil {
		return nil, fmt.Errorf("%s record: %w", typeName(h.Type), c.err)
	}
	return rec, nil
}

// trailerEvent finds the event whose sample_id trailer ends a non-sample
// record; records perf made up itself carry id 0, and records of an
// unknown id take the first event's layout, as perf reads them.
func (d *Decoder) trailerEvent(body []byte) *Event {
	if len(d.events) == 0 {
		return nil
	}
	if d.trailerWord > 0 && len(d.events) > 1 && len(body) >= 8*d.trailerWord {
		id := binary.LittleEndian.Uint64(body[len(body)-8*d.trailerWord:])
		if e := d.byID[id]; e != nil {
			return e
		}
	}
	return d.events[0]
}

// parseSampleID reads a sample_id trailer of exactly the right size.
func parseSampleID(a *Attr, b []byte) Trailer {
	c := &cursor{b: b}
	st := a.SampleType
	id := Trailer{Fields: st & (SampleTID | SampleTime | SampleID | SampleStreamID | SampleCPU | SampleIdentifier)}
	if st&SampleTID != 0 {
		id.Pid, id.Tid = c.u32("pid"), c.u32("tid")
	}
	if st&SampleTime != 0 {
		id.Time = c.u64("time")
	}
	if st&SampleID != 0 {
		id.ID = c.u64("id")
	}
	if st&SampleStreamID != 0 {
		id.StreamID = c.u64("stream id")
	}
	if st&SampleCPU != 0 {
		id.CPU = c.u32("cpu")
		c.u32("reserved")
	}
	if st&SampleIdentifier != 0 {
		id.ID = c.u64("identifier")
	}
	return id
}

// decodeOther decodes the kernel's non-sample records; c holds the body
// without its sample_id trailer.
func (d *Decoder) decodeOther(h Header, id Trailer, c *cursor) Record {
	switch h.Type {
	case RecordMmap, RecordMmap2:
		return d.decodeMmap(h, id, c)
	case RecordComm:
		d.comm = Comm{Header: h, Trailer: id, Pid: c.u32("pid"), Tid: c.u32("tid")}
		d.comm.Comm = cstring(c.rest())
		return &d.comm
	case RecordFork, RecordExit:
		d.task = Task{Header: h, Trailer: id, Pid: c.u32("pid"), Ppid: c.u32("ppid"),
			Tid: c.u32("tid"), Ptid: c.u32("ptid"), Time: c.u64("time")}
		return &d.task
	case RecordLost:
		d.lost = Lost{Header: h, Trailer: id, ID: c.u64("id"), Lost: c.u64("lost")}
		return &d.lost
	case RecordLostSamples:
		d.lost = Lost{Header: h, Trailer: id, Lost: c.u64("lost")}
		return &d.lost
	default: // RecordThrottle, RecordUnthrottle
		d.throttle = Throttle{Header: h, Trailer: id, Time: c.u64("time"), ID: c.u64("id"), StreamID: c.u64("stream id")}
		return &d.throttle
	}
}

// decodeMmap decodes MMAP and MMAP2 records.
func (d *Decoder) decodeMmap(h Header, id Trailer, c *cursor) Record {
	m := &d.mmap
	*m = Mmap{Header: h, Trailer: id, Pid: c.u32("pid"), Tid: c.u32("tid"),
		Addr: c.u64("addr"), Len: c.u64("len"), Pgoff: c.u64("pgoff")}
	if h.Type == RecordMmap2 {
		if h.Misc&MiscMmapBuildID != 0 {
			n := c.bytes("build-id size", 4)
			bid := c.bytes("build-id", 20)
			if n != nil && bid != nil {
				m.BuildID = bid[:min(int(n[0]), len(bid))]
			}
		} else {
			m.Maj, m.Min, m.Ino, m.InoGen = c.u32("maj"), c.u32("min"), c.u64("ino"), c.u64("ino generation")
		}
		m.Prot, m.Flags = c.u32("prot"), c.u32("flags")
	}
	m.Filename = cstring(c.rest())
	return m
}

// typeName names a record type in errors.
func typeName(t uint32) string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("type %d", t)
}

var typeNames = map[uint32]string{
	RecordMmap: "MMAP", RecordLost: "LOST", RecordComm: "COMM", RecordExit: "EXIT",
	RecordThrottle: "THROTTLE", RecordUnthrottle: "UNTHROTTLE", RecordFork: "FORK",
	RecordSample: "SAMPLE", RecordMmap2: "MMAP2", RecordLostSamples: "LOST_SAMPLES",
	RecordHeaderAttr: "HEADER_ATTR", RecordHeaderEventType: "HEADER_EVENT_TYPE",
	RecordHeaderTracingData: "HEADER_TRACING_DATA", RecordHeaderBuildID: "HEADER_BUILD_ID",
	RecordIDIndex: "ID_INDEX", RecordAuxtrace: "AUXTRACE", RecordEventUpdate: "EVENT_UPDATE",
	RecordHeaderFeature: "HEADER_FEATURE", RecordCompressed: "COMPRESSED", RecordCompressed2: "COMPRESSED2",
}
