package perfevent

import (
	"bloop/internal/mapfile"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
)

// The magic numbers a perf.data file starts with.
const (
	Magic          = "PERFILE2"
	magicSwapped   = "2ELIFREP" // written by a big-endian machine
	magicV1        = "PERFFILE" // perf's first format
	pipeHeaderSize = 16         // magic, size
	fileHeaderSize = 104        // magic, size, attr_size, 3 sections, feature bitmap
	oldHeaderSize  = 72         // the same without the feature bitmap
	fileAttrExtra  = 16         // the ids section after each attribute
)

// ErrFormat is wrapped by the errors of malformed perf data.
var ErrFormat = errors.New("malformed perf data")

// IsPerfData reports whether head, the start of a file, is perf's: a
// perf.data file or stream of any endianness or version (Open refuses
// the ones it cannot read, saying why).
func IsPerfData(head []byte) bool {
	if len(head) < 8 {
		return false
	}
	switch string(head[:8]) {
	case Magic, magicSwapped, magicV1:
		return true
	}
	return false
}

// File is an open perf.data file or pipe-mode stream.
type File struct {
	Path     string
	Pipe     bool     // written by perf record -o - (attributes and features are records)
	Events   []*Event // in the file's order; pipe mode's as read so far
	Features Features

	r         io.ReaderAt
	size      int64
	file      *os.File // Open's, closed by Close and mapped by Keep
	dataStart int64    // the data section, or the records after a pipe's header
	dataEnd   int64
	dec       *Decoder
	applied   int64 // pipe mode: perf's own records before this offset were taken in
	zstd      *zstdStream
	pending   []byte // decompressed bytes of a record not yet complete
	// mapped is the file's bytes, mapped by Keep: records are then read
	// in place, not through a window (records.go), and release unmaps
	// them. inFile: the record being delivered lies in them (not in a
	// decompressed copy).
	mapped []byte
	inFile bool
	// skim: the walk is Skim's, passing samples as raw, the one reused;
	// onSample, when set, is given the samples instead of the walk's fn.
	skim     bool
	raw      RawSample
	onSample func(*RawSample) error
	// parts are where records begin about PartBytes apart (parts.go),
	// the next to note at nextPart; noParts: the file is one part. part:
	// this File reads one part of another's (SkimPart).
	parts    []int64
	nextPart int64
	noParts  bool
	part     bool
}

// section is a perf_file_section: a part of the file.
type section struct{ off, size uint64 }

// Open opens a perf.data file (or a saved pipe-mode stream) and reads
// its header, attributes and features; Records streams the rest.
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	f, err := NewFile(fh, st.Size(), path)
	if err != nil {
		fh.Close()
		return nil, err
	}
	f.file = fh
	return f, nil
}

// Keep makes the bytes of the records Records delivers from the file
// itself (InFile) outlive the call and Close, until release is called:
// a reader that hands samples to other goroutines then need not copy
// their stacks. ok is false when the file cannot be mapped (not Open's,
// or not on Linux) or is kept already: then nothing is kept, and
// records are valid during the call only.
func (f *File) Keep() (release func(), ok bool) {
	if f.file == nil || f.mapped != nil {
		return nil, false
	}
	b := mapfile.Map(f.file, f.size, true)
	if b == nil {
		return nil, false
	}
	f.mapped = b
	return func() { mapfile.Unmap(b) }, true
}

// InFile reports, during Records' call, whether the record's bytes lie
// in the file's kept mapping (see Keep), so they stay valid after it.
func (f *File) InFile() bool { return f.inFile }

// NewFile reads perf data of size bytes from r as Open does; name is
// used in errors.
func NewFile(r io.ReaderAt, size int64, name string) (*File, error) {
	f := &File{Path: name, r: r, size: size}
	if err := f.readHeader(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

// UnknownTypes counts the records of each type Records passed on as
// *Unknown so far.
func (f *File) UnknownTypes() map[uint32]int { return f.dec.UnknownTypes() }

// Close closes the file Open opened.
func (f *File) Close() error {
	f.mapped = nil // release unmaps it
	if f.file != nil {
		return f.file.Close()
	}
	return nil
}

// readAt reads n bytes at off, failing with what was being read.
func (f *File) readAt(what string, off, n uint64) ([]byte, error) {
	if off > uint64(f.size) || n > uint64(f.size)-off {
		return nil, fmt.Errorf("%w: %s (%d bytes at offset %#x) lies beyond the end of the file (%d bytes)", ErrFormat, what, n, off, f.size)
	}
	b := make([]byte, n)
	if n == 0 {
		return b, nil
	}
	if k, err := f.r.ReadAt(b, int64(off)); k < len(b) {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	return b, nil
}

// readHeader reads the file header and, for a file, its attributes and
// features; for a stream, the records that describe its events.
func (f *File) readHeader() error {
	head, err := f.readAt("the header", 0, min(fileHeaderSize, uint64(max(f.size, 0))))
	if err != nil {
		return err
	}
	if len(head) < pipeHeaderSize {
		return fmt.Errorf("%w: %d bytes, too short for a perf.data header", ErrFormat, len(head))
	}
	switch string(head[:8]) {
	case Magic:
	case magicSwapped:
		return errors.New("a big-endian perf.data (recorded on a big-endian machine): not supported")
	case magicV1:
		return errors.New("perf.data of perf's first format (PERFFILE): not supported, rewrite it with a newer perf (perf inject -i OLD -o NEW)")
	default:
		return fmt.Errorf("%w: no PERFILE2 magic", ErrFormat)
	}
	le := binary.LittleEndian
	hsize := le.Uint64(head[8:])
	if hsize == pipeHeaderSize {
		f.Pipe = true
		f.dataStart, f.dataEnd = pipeHeaderSize, f.size
		return f.prescan()
	}
	if hsize != fileHeaderSize && hsize != oldHeaderSize {
		return fmt.Errorf("%w: header size %d (want %d, or %d for a stream)", ErrFormat, hsize, fileHeaderSize, pipeHeaderSize)
	}
	if uint64(len(head)) < hsize {
		return fmt.Errorf("%w: %d bytes, too short for the header's %d", ErrFormat, len(head), hsize)
	}
	attrSize := le.Uint64(head[16:])
	attrs := section{le.Uint64(head[24:]), le.Uint64(head[32:])}
	data := section{le.Uint64(head[40:]), le.Uint64(head[48:])}
	var feats [featBitmapWords]uint64
	if hsize == fileHeaderSize {
		for i := range feats {
			feats[i] = le.Uint64(head[72+8*i:])
		}
	}
	if data.off > uint64(f.size) || data.size > uint64(f.size)-data.off {
		return fmt.Errorf("%w: data section (%d bytes at offset %#x) lies beyond the end of the file (%d bytes)", ErrFormat, data.size, data.off, f.size)
	}
	if data.size == 0 && feats == [featBitmapWords]uint64{} && uint64(f.size) > data.off {
		// perf record writes the sizes and features when it ends.
		return errors.New("no data size and no features in the header: perf record did not finish writing this file")
	}
	f.dataStart, f.dataEnd = int64(data.off), int64(data.off+data.size)
	if err := f.readAttrs(attrSize, attrs); err != nil {
		return err
	}
	if err := f.readFeatures(feats, data.off+data.size); err != nil {
		return err
	}
	f.nameEvents()
	dec, err := NewDecoder(f.Events...)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrFormat, err)
	}
	f.dec = dec
	return nil
}

// readAttrs reads the attribute section: each attribute followed by the
// section of its ids.
func (f *File) readAttrs(attrSize uint64, attrs section) error {
	if attrSize < AttrSizeVer0+fileAttrExtra || attrSize > 1<<16 {
		return fmt.Errorf("%w: attribute entries of %d bytes", ErrFormat, attrSize)
	}
	if attrs.size%attrSize != 0 {
		return fmt.Errorf("%w: attribute section of %d bytes is not a whole number of %d-byte entries", ErrFormat, attrs.size, attrSize)
	}
	b, err := f.readAt("the attribute section", attrs.off, attrs.size)
	if err != nil {
		return err
	}
	for off := uint64(0); off < attrs.size; off += attrSize {
		entry := b[off : off+attrSize]
		a, err := ParseAttr(entry[:attrSize-fileAttrExtra])
		if err != nil {
			return fmt.Errorf("%w: attribute at offset %#x: %v", ErrFormat, attrs.off+off, err)
		}
		if uint64(a.Size)+fileAttrExtra != attrSize {
			return fmt.Errorf("%w: attribute at offset %#x is %d bytes in entries of %d", ErrFormat, attrs.off+off, a.Size, attrSize)
		}
		le := binary.LittleEndian
		ids := section{le.Uint64(entry[a.Size:]), le.Uint64(entry[a.Size+8:])}
		raw, err := f.readAt(fmt.Sprintf("the ids of attribute %d", len(f.Events)), ids.off, ids.size&^7)
		if err != nil {
			return err
		}
		e := &Event{Attr: a}
		for i := 0; i+8 <= len(raw); i += 8 {
			e.IDs = append(e.IDs, le.Uint64(raw[i:]))
		}
		f.Events = append(f.Events, e)
	}
	return nil
}

// readFeatures reads the feature sections listed at off, one for each
// bit of the bitmap, in bit order.
func (f *File) readFeatures(bitmap [featBitmapWords]uint64, off uint64) error {
	n := 0
	for _, w := range bitmap {
		n += bits.OnesCount64(w)
	}
	table, err := f.readAt("the feature table", off, uint64(16*n))
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	i := 0
	for id := range featBitmapWords * 64 {
		if bitmap[id/64]&(1<<(id%64)) == 0 {
			continue
		}
		s := section{le.Uint64(table[16*i:]), le.Uint64(table[16*i+8:])}
		i++
		if id == FeatTracingData {
			f.Features.Present = append(f.Features.Present, id)
			continue // large and of no use here: not read
		}
		b, err := f.readAt("feature "+featName(id), s.off, s.size)
		if err != nil {
			return err
		}
		if err := f.Features.parseFeature(id, b); err != nil {
			return fmt.Errorf("%w: %v (section at offset %#x)", ErrFormat, err, s.off)
		}
	}
	return nil
}

// nameEvents names the events from HEADER_EVENT_DESC (matched by id, or
// by position when it gives no ids), else from their type and config.
func (f *File) nameEvents() {
	descs := f.Features.EventDesc
	byID := map[uint64]string{}
	for _, d := range descs {
		for _, id := range d.IDs {
			byID[id] = d.Name
		}
	}
	for i, e := range f.Events {
		for _, id := range e.IDs {
			if name, ok := byID[id]; ok {
				e.Name = name
				break
			}
		}
		if e.Name == "" && len(descs) == len(f.Events) && len(descs[i].IDs) == 0 {
			e.Name = descs[i].Name
		}
		if e.Name == "" {
			e.Name = DefaultName(&e.Attr)
		}
	}
}
