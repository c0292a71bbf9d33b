package perfevent

import (
	"encoding/binary"
	"fmt"
)

// Feature sections of a perf.data file (HEADER_*): the bits of the file
// header's feature bitmap, and the ids of pipe mode's HEADER_FEATURE
// records.
const (
	FeatTracingData  = 1
	FeatBuildID      = 2
	FeatHostname     = 3
	FeatOSRelease    = 4
	FeatVersion      = 5
	FeatArch         = 6
	FeatNrCPUs       = 7
	FeatCPUDesc      = 8
	FeatCPUID        = 9
	FeatTotalMem     = 10
	FeatCmdline      = 11
	FeatEventDesc    = 12
	FeatSampleTime   = 21
	FeatCompressed   = 27
	featBitmapWords  = 4 // 256 bits
	compressZstd     = 1 // HEADER_COMPRESSED's type for zstd
	eventUpdateName  = 2 // EVENT_UPDATE's type for an event's name
	buildIDEventSize = 8 + 4 + 24
)

// Features is what a perf.data file's feature sections (or pipe mode's
// HEADER_FEATURE and HEADER_BUILD_ID records) say about the recording.
// Only the sections listed here are decoded; Present lists all there
// were.
type Features struct {
	Present      []int
	BuildIDs     map[string][]byte // by path as the mappings name it ("[kernel.kallsyms]" too)
	Cmdline      []string          // perf's command line
	Hostname     string
	OSRelease    string
	PerfVersion  string
	Arch         string
	CPUDesc      string
	CPUID        string
	NrCPUsAvail  uint32
	NrCPUsOnline uint32
	TotalMemKB   uint64
	FirstSample  uint64 // times of the first and last samples
	LastSample   uint64
	EventDesc    []Event // events with their names
	Compression  *Compression
}

// Compression describes PERF_RECORD_COMPRESSED records (perf record -z).
type Compression struct {
	Version, Type, Level, Ratio, MmapLen uint32
}

// parseFeature decodes one feature section's bytes.
func (f *Features) parseFeature(id int, b []byte) error {
	f.Present = append(f.Present, id)
	c := &featCursor{b: b}
	switch id {
	case FeatBuildID:
		return f.parseBuildIDs(b)
	case FeatHostname:
		f.Hostname = c.str()
	case FeatOSRelease:
		f.OSRelease = c.str()
	case FeatVersion:
		f.PerfVersion = c.str()
	case FeatArch:
		f.Arch = c.str()
	case FeatCPUDesc:
		f.CPUDesc = c.str()
	case FeatCPUID:
		f.CPUID = c.str()
	case FeatNrCPUs:
		f.NrCPUsAvail, f.NrCPUsOnline = c.u32(), c.u32()
	case FeatTotalMem:
		f.TotalMemKB = c.u64()
	case FeatCmdline:
		f.Cmdline = nil
		for n := c.count(4); n > 0 && c.err == nil; n-- {
			f.Cmdline = append(f.Cmdline, c.str())
		}
	case FeatEventDesc:
		f.EventDesc = parseEventDesc(c)
	case FeatSampleTime:
		f.FirstSample, f.LastSample = c.u64(), c.u64()
	case FeatCompressed:
		f.Compression = &Compression{c.u32(), c.u32(), c.u32(), c.u32(), c.u32()}
	}
	if c.err != nil {
		return fmt.Errorf("feature %s: %w", featName(id), c.err)
	}
	return nil
}

// parseEventDesc reads HEADER_EVENT_DESC: each event's attribute, name
// and ids.
func parseEventDesc(c *featCursor) []Event {
	n := c.count(8)
	attrSize := c.u32()
	var evs []Event
	for ; n > 0 && c.err == nil; n-- {
		b := c.bytes(uint64(attrSize))
		if c.err != nil {
			break
		}
		a, err := ParseAttr(b)
		if err != nil {
			c.err = fmt.Errorf("event %d: %w", len(evs), err)
			break
		}
		nids := c.u32()
		e := Event{Attr: a, Name: c.str()}
		for i := uint64(c.count64(uint64(nids), 8)); i > 0 && c.err == nil; i-- {
			e.IDs = append(e.IDs, c.u64())
		}
		evs = append(evs, e)
	}
	return evs
}

// parseBuildIDs reads HEADER_BUILD_ID: a sequence of build_id_event
// records.
func (f *Features) parseBuildIDs(b []byte) error {
	for off := 0; off < len(b); {
		if len(b)-off < 8 {
			return fmt.Errorf("feature build_id: %d stray bytes at byte %d", len(b)-off, off)
		}
		h := Header{binary.LittleEndian.Uint32(b[off:]), binary.LittleEndian.Uint16(b[off+4:]), binary.LittleEndian.Uint16(b[off+6:])}
		if int(h.Size) < buildIDEventSize || int(h.Size) > len(b)-off {
			return fmt.Errorf("feature build_id: record of %d bytes at byte %d (%d left, at least %d needed)", h.Size, off, len(b)-off, buildIDEventSize)
		}
		f.addBuildID(h, b[off+8:off+int(h.Size)])
		off += int(h.Size)
	}
	return nil
}

// addBuildID adds one build_id_event's body (pid, 24 bytes of build-id,
// the path), of at least buildIDEventSize-8 bytes.
func (f *Features) addBuildID(h Header, body []byte) {
	id := body[4:24]
	if h.Misc&miscBuildIDSized != 0 {
		id = id[:min(int(body[24]), len(id))]
	}
	if f.BuildIDs == nil {
		f.BuildIDs = map[string][]byte{}
	}
	f.BuildIDs[cstring(body[28:])] = append([]byte(nil), id...)
}

// featName names a feature in errors.
func featName(id int) string {
	if n, ok := featNames[id]; ok {
		return n
	}
	return fmt.Sprintf("%d", id)
}

var featNames = map[int]string{FeatTracingData: "tracing_data", FeatBuildID: "build_id", FeatHostname: "hostname",
	FeatOSRelease: "osrelease", FeatVersion: "version", FeatArch: "arch", FeatNrCPUs: "nrcpus",
	FeatCPUDesc: "cpudesc", FeatCPUID: "cpuid", FeatTotalMem: "total_mem", FeatCmdline: "cmdline",
	FeatEventDesc: "event_desc", FeatSampleTime: "sample_time", FeatCompressed: "compressed"}

// featCursor reads a feature section's fields; the first that does not
// fit sets err with its offset in the section.
type featCursor struct {
	b   []byte
	off int
	err error
}

func (c *featCursor) bytes(n uint64) []byte {
	if c.err != nil {
		return nil
	}
	if n > uint64(len(c.b)-c.off) {
		c.err = fmt.Errorf("%d bytes at byte %d run past the section's end at byte %d", n, c.off, len(c.b))
		return nil
	}
	v := c.b[c.off : c.off+int(n)]
	c.off += int(n)
	return v
}

func (c *featCursor) u32() uint32 {
	if b := c.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (c *featCursor) u64() uint64 {
	if b := c.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// str reads a perf_header_string: a length and that many bytes, the
// string ending at the first NUL.
func (c *featCursor) str() string { return cstring(c.bytes(uint64(c.u32()))) }

// count reads a u32 count of entries of at least each bytes each, zero
// (and an error) when they cannot fit.
func (c *featCursor) count(each uint64) uint32 {
	return uint32(c.count64(uint64(c.u32()), each))
}

// count64 checks a count of entries of at least each bytes each against
// the bytes left.
func (c *featCursor) count64(n, each uint64) uint64 {
	if c.err == nil && n > uint64(len(c.b)-c.off)/each {
		c.err = fmt.Errorf("%d entries at byte %d cannot fit in the section's %d bytes", n, c.off, len(c.b))
	}
	if c.err != nil {
		return 0
	}
	return n
}
