// Package perfevent decodes the records of Linux perf events, from a
// perf_event_open ring buffer (Decoder, given the attributes the events
// were opened with) or from a perf.data file written by perf record
// (Open), in both of perf's layouts: the seekable file and the stream of
// pipe mode (perf record -o -). It is portable: it reads bytes, it opens
// no events.
//
// The layouts are those of Linux's include/uapi/linux/perf_event.h (the
// attribute and the records) and tools/perf/Documentation/
// perf.data-file-format.txt (the file). Only little-endian data is read.
package perfevent

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Attr is a perf_event_attr: what an event counts and what its records
// hold. Fields a shorter (older) attribute lacks are zero.
type Attr struct {
	Type             uint32 // PERF_TYPE_*
	Size             uint32 // bytes of the attribute as written
	Config           uint64
	SamplePeriod     uint64 // the sampling frequency when Flags&FlagFreq
	SampleType       uint64 // Sample* bits: the fields of a sample
	ReadFormat       uint64 // Format* bits: the layout of counter values
	Flags            uint64 // Flag* bits
	WakeupEvents     uint32
	BPType           uint32
	Config1          uint64
	Config2          uint64
	BranchSampleType uint64
	SampleRegsUser   uint64 // mask of the user registers in a sample
	SampleStackUser  uint32 // bytes of user stack asked for per sample
	ClockID          int32
	SampleRegsIntr   uint64 // mask of the interrupted registers in a sample
	AuxWatermark     uint32
	SampleMaxStack   uint16
	AuxSampleSize    uint32
	SigData          uint64
	Config3          uint64
}

// The sizes perf_event_attr has had (PERF_ATTR_SIZE_VER0..8).
const (
	AttrSizeVer0 = 64
	AttrSizeVer1 = 72  // config2
	AttrSizeVer2 = 80  // branch_sample_type
	AttrSizeVer3 = 96  // sample_regs_user, sample_stack_user
	AttrSizeVer4 = 104 // sample_regs_intr
	AttrSizeVer5 = 112 // aux_watermark
	AttrSizeVer6 = 120 // aux_sample_size
	AttrSizeVer7 = 128 // sig_data
	AttrSizeVer8 = 136 // config3
)

// Attribute types (PERF_TYPE_*).
const (
	TypeHardware   = 0
	TypeSoftware   = 1
	TypeTracepoint = 2
	TypeHWCache    = 3
	TypeRaw        = 4
	TypeBreakpoint = 5
)

// Sample type bits (PERF_SAMPLE_*), in the order of their fields in a
// sample.
const (
	SampleIP           = 1 << 0
	SampleTID          = 1 << 1
	SampleTime         = 1 << 2
	SampleAddr         = 1 << 3
	SampleRead         = 1 << 4
	SampleCallchain    = 1 << 5
	SampleID           = 1 << 6
	SampleCPU          = 1 << 7
	SamplePeriod       = 1 << 8
	SampleStreamID     = 1 << 9
	SampleRaw          = 1 << 10
	SampleBranchStack  = 1 << 11
	SampleRegsUser     = 1 << 12
	SampleStackUser    = 1 << 13
	SampleWeight       = 1 << 14
	SampleDataSrc      = 1 << 15
	SampleIdentifier   = 1 << 16
	SampleTransaction  = 1 << 17
	SampleRegsIntr     = 1 << 18
	SamplePhysAddr     = 1 << 19
	SampleAux          = 1 << 20
	SampleCgroup       = 1 << 21
	SampleDataPageSize = 1 << 22
	SampleCodePageSize = 1 << 23
	SampleWeightStruct = 1 << 24
)

// Read format bits (PERF_FORMAT_*).
const (
	FormatTotalTimeEnabled = 1 << 0
	FormatTotalTimeRunning = 1 << 1
	FormatID               = 1 << 2
	FormatGroup            = 1 << 3
	FormatLost             = 1 << 4
)

// Branch sample type bits that change a sample's layout.
const (
	BranchHWIndex  = 1 << 17 // an hw_idx word before the entries
	BranchCounters = 1 << 19 // a counters word per entry after them
)

// Flag bits of the attribute's bit field word.
const (
	FlagDisabled      = 1 << 0
	FlagInherit       = 1 << 1
	FlagExcludeUser   = 1 << 4
	FlagExcludeKernel = 1 << 5
	FlagExcludeHV     = 1 << 6
	FlagMmap          = 1 << 8
	FlagComm          = 1 << 9
	FlagFreq          = 1 << 10
	FlagTask          = 1 << 13
	FlagSampleIDAll   = 1 << 18
	FlagMmap2         = 1 << 23
	FlagCommExec      = 1 << 24
	FlagBuildID       = 1 << 34 // MMAP2 records carry build-ids
)

// attrField is where one field lies in the attribute: its offset and
// width in bytes.
type attrField struct {
	off, width int
	set        func(a *Attr, v uint64)
}

// attrFields lists the fields in layout order; a field is read only when
// the attribute's size covers it.
var attrFields = []attrField{
	{0, 4, func(a *Attr, v uint64) { a.Type = uint32(v) }},
	{4, 4, func(a *Attr, v uint64) { a.Size = uint32(v) }},
	{8, 8, func(a *Attr, v uint64) { a.Config = v }},
	{16, 8, func(a *Attr, v uint64) { a.SamplePeriod = v }},
	{24, 8, func(a *Attr, v uint64) { a.SampleType = v }},
	{32, 8, func(a *Attr, v uint64) { a.ReadFormat = v }},
	{40, 8, func(a *Attr, v uint64) { a.Flags = v }},
	{48, 4, func(a *Attr, v uint64) { a.WakeupEvents = uint32(v) }},
	{52, 4, func(a *Attr, v uint64) { a.BPType = uint32(v) }},
	{56, 8, func(a *Attr, v uint64) { a.Config1 = v }},
	{64, 8, func(a *Attr, v uint64) { a.Config2 = v }},
	{72, 8, func(a *Attr, v uint64) { a.BranchSampleType = v }},
	{80, 8, func(a *Attr, v uint64) { a.SampleRegsUser = v }},
	{88, 4, func(a *Attr, v uint64) { a.SampleStackUser = uint32(v) }},
	{92, 4, func(a *Attr, v uint64) { a.ClockID = int32(uint32(v)) }},
	{96, 8, func(a *Attr, v uint64) { a.SampleRegsIntr = v }},
	{104, 4, func(a *Attr, v uint64) { a.AuxWatermark = uint32(v) }},
	{108, 2, func(a *Attr, v uint64) { a.SampleMaxStack = uint16(v) }},
	{112, 4, func(a *Attr, v uint64) { a.AuxSampleSize = uint32(v) }},
	{120, 8, func(a *Attr, v uint64) { a.SigData = v }},
	{128, 8, func(a *Attr, v uint64) { a.Config3 = v }},
}

// ParseAttr reads a perf_event_attr from the start of b. Its size is
// its own size field (0 meaning the first version's 64 bytes); b must
// hold that many bytes. Fields after the last one this package knows are
// ignored, so attributes of later kernels parse.
func ParseAttr(b []byte) (Attr, error) {
	if len(b) < AttrSizeVer0 {
		return Attr{}, fmt.Errorf("perf_event_attr of %d bytes, shorter than the first version's %d", len(b), AttrSizeVer0)
	}
	size := int(binary.LittleEndian.Uint32(b[4:]))
	if size == 0 {
		size = AttrSizeVer0
	}
	if size < AttrSizeVer0 || size > len(b) {
		return Attr{}, fmt.Errorf("perf_event_attr says its size is %d bytes, %d available", size, len(b))
	}
	var a Attr
	for _, f := range attrFields {
		if f.off+f.width > size {
			break
		}
		var v uint64
		switch f.width {
		case 2:
			v = uint64(binary.LittleEndian.Uint16(b[f.off:]))
		case 4:
			v = uint64(binary.LittleEndian.Uint32(b[f.off:]))
		default:
			v = binary.LittleEndian.Uint64(b[f.off:])
		}
		f.set(&a, v)
	}
	a.Size = uint32(size)
	return a, nil
}

// AppendAttr appends a's bytes, a.Size of them (AttrSizeVer8 when 0), to
// b: the inverse of ParseAttr, for tests and tools that write records.
func AppendAttr(b []byte, a Attr) []byte {
	size := int(a.Size)
	if size == 0 {
		size = AttrSizeVer8
		a.Size = uint32(size)
	}
	start := len(b)
	b = append(b, make([]byte, size)...)
	out := b[start:]
	vals := a.fieldValues()
	for i, f := range attrFields {
		if f.off+f.width > size {
			break
		}
		switch f.width {
		case 2:
			binary.LittleEndian.PutUint16(out[f.off:], uint16(vals[i]))
		case 4:
			binary.LittleEndian.PutUint32(out[f.off:], uint32(vals[i]))
		default:
			binary.LittleEndian.PutUint64(out[f.off:], vals[i])
		}
	}
	return b
}

// fieldValues lists a's fields in the order of attrFields.
func (a *Attr) fieldValues() []uint64 {
	return []uint64{uint64(a.Type), uint64(a.Size), a.Config, a.SamplePeriod, a.SampleType,
		a.ReadFormat, a.Flags, uint64(a.WakeupEvents), uint64(a.BPType), a.Config1, a.Config2,
		a.BranchSampleType, a.SampleRegsUser, uint64(a.SampleStackUser), uint64(uint32(a.ClockID)),
		a.SampleRegsIntr, uint64(a.AuxWatermark), uint64(a.SampleMaxStack), uint64(a.AuxSampleSize),
		a.SigData, a.Config3}
}

// SampleIDAll reports whether the event's non-sample records end with
// the sample_id fields (pid/tid, time, id, stream id, cpu, identifier as
// SampleType selects).
func (a *Attr) SampleIDAll() bool { return a.Flags&FlagSampleIDAll != 0 }

// Freq reports whether SamplePeriod is a frequency in Hz.
func (a *Attr) Freq() bool { return a.Flags&FlagFreq != 0 }

// NumRegsUser is the number of user registers in a sample.
func (a *Attr) NumRegsUser() int { return bits.OnesCount64(a.SampleRegsUser) }

// NumRegsIntr is the number of interrupted-state registers in a sample.
func (a *Attr) NumRegsIntr() int { return bits.OnesCount64(a.SampleRegsIntr) }

// idTrailerSize is the size of the sample_id trailer of non-sample
// records, 0 without sample_id_all.
func (a *Attr) idTrailerSize() int {
	if !a.SampleIDAll() {
		return 0
	}
	n := 0
	for _, bit := range []uint64{SampleTID, SampleTime, SampleID, SampleStreamID, SampleCPU, SampleIdentifier} {
		if a.SampleType&bit != 0 {
			n += 8
		}
	}
	return n
}

// sampleIDWord is the index of the event id among a sample's leading u64
// words, -1 when samples carry none.
func sampleIDWord(st uint64) int {
	if st&SampleIdentifier != 0 {
		return 0
	}
	if st&SampleID == 0 {
		return -1
	}
	n := 0
	for _, bit := range []uint64{SampleIP, SampleTID, SampleTime, SampleAddr} {
		if st&bit != 0 {
			n++
		}
	}
	return n
}

// trailerIDWord is the index, counted from the end (1 is the last word),
// of the event id in a non-sample record's sample_id trailer; -1 when the
// trailer has none.
func trailerIDWord(a *Attr) int {
	st := a.SampleType
	switch {
	case !a.SampleIDAll() || st&(SampleID|SampleIdentifier) == 0:
		return -1
	case st&SampleIdentifier != 0:
		return 1
	}
	n := 1
	if st&SampleCPU != 0 {
		n++
	}
	if st&SampleStreamID != 0 {
		n++
	}
	return n
}
