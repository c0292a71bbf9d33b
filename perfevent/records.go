package perfevent

import (
	"bloop/internal/mapfile"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Records calls fn with each record of the data in file order (which is
// not quite time order: see perf's FINISHED_ROUND): the kernel's records
// decoded, perf's own records that describe the recording taken into
// Events and Features instead, and any other record as *Unknown. The
// record passed to fn, and what it points to, is valid only during the
// call. An error from fn stops the scan and is returned as it is.
func (f *File) Records(fn func(Record) error) error {
	return f.walk(false, fn)
}

// Skim is Records without decoding the samples: each PERF_RECORD_SAMPLE
// is passed as a *RawSample, its header and bytes, and every other
// record as Records passes it. A reader that wants everything but the
// samples (the mappings, threads and losses a report needs before its
// pass over the samples) saves their decoding, most of a file's.
func (f *File) Skim(fn func(Record) error) error {
	return f.walk(true, fn)
}

// walk is Records, or Skim when skim is set.
func (f *File) walk(skim bool, fn func(Record) error) error {
	f.skim = skim
	defer f.endCompressed()
	s := f.newStream()
	defer s.release()
	mark := skim && !f.part
	if mark {
		f.parts, f.nextPart, f.noParts = f.parts[:0], f.dataStart, f.Pipe
	}
	for {
		h, body, off, err := s.next()
		if err == io.EOF {
			if mark {
				f.parts = append(f.parts, f.dataEnd)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		if mark {
			f.markPart(off, h.Type)
		}
		if err := f.record(s, h, body, off, fn); err != nil {
			// Only here: errors.As's target escapes, an allocation per
			// record were it asked of every one.
			var stop stopError
			if errors.As(err, &stop) {
				return stop.err
			}
			return fmt.Errorf("%s: record at offset %#x: %w", f.Path, off, err)
		}
	}
}

// stopError carries an error of the caller's function through.
type stopError struct{ err error }

func (e stopError) Error() string { return e.err.Error() }

// record handles one record at off; s is the stream it came from, for
// the records followed by data of their own.
func (f *File) record(s *stream, h Header, body []byte, off int64, fn func(Record) error) error {
	switch h.Type {
	case RecordHeaderAttr, RecordHeaderBuildID, RecordHeaderFeature, RecordEventUpdate:
		if off < f.applied {
			return nil // taken in by Open's scan of a stream, or an earlier Records
		}
		f.applied = off + int64(h.Size)
		return f.applyUser(h, body)
	case RecordHeaderTracingData:
		if len(body) < 4 {
			return fmt.Errorf("%w: HEADER_TRACING_DATA record of %d bytes", ErrFormat, h.Size)
		}
		return s.skip(uint64(binary.LittleEndian.Uint32(body)))
	case RecordAuxtrace:
		if len(body) < 8 {
			return fmt.Errorf("%w: AUXTRACE record of %d bytes", ErrFormat, h.Size)
		}
		return s.skip(binary.LittleEndian.Uint64(body))
	case RecordCompressed, RecordCompressed2:
		f.inFile = false
		return f.decompress(h, body, fn)
	}
	f.inFile = s.data != nil
	return f.deliver(h, body, fn)
}

// deliver decodes a record for fn (a sample only when not skimming).
func (f *File) deliver(h Header, body []byte, fn func(Record) error) error {
	var rec Record
	if f.skim && h.Type == RecordSample {
		f.raw.Header, f.raw.Body, f.raw.dec = h, body, f.dec
		if f.onSample != nil {
			return wrapFnError(f.onSample(&f.raw))
		}
		rec = &f.raw
	} else {
		var err error
		if rec, err = f.dec.Decode(h, body); err != nil {
			return fmt.Errorf("%w: %v", ErrFormat, err)
		}
	}
	return wrapFnError(fn(rec))
}

// wrapFnError is what the walk makes of an error of its caller's
// function: a RawSample's decoding error as the record's, any other to
// be returned as it is (stopError).
func wrapFnError(err error) error {
	if err == nil {
		return nil
	}
	var de decodeError
	if errors.As(err, &de) {
		return de.err // a RawSample's, decoded by fn
	}
	return stopError{err}
}

// applyUser takes in a record perf writes to describe the recording.
func (f *File) applyUser(h Header, body []byte) error {
	switch h.Type {
	case RecordHeaderAttr:
		return f.addAttrRecord(body)
	case RecordHeaderBuildID:
		if len(body) < buildIDEventSize-8 {
			return fmt.Errorf("%w: HEADER_BUILD_ID record of %d bytes, at least %d expected", ErrFormat, h.Size, buildIDEventSize)
		}
		f.Features.addBuildID(h, body)
	case RecordHeaderFeature:
		if len(body) < 8 {
			return fmt.Errorf("%w: HEADER_FEATURE record of %d bytes", ErrFormat, h.Size)
		}
		id := binary.LittleEndian.Uint64(body)
		if id == FeatTracingData || id >= featBitmapWords*64 {
			return nil
		}
		if err := f.Features.parseFeature(int(id), body[8:]); err != nil {
			return fmt.Errorf("%w: HEADER_FEATURE record: %v", ErrFormat, err)
		}
		if id == FeatEventDesc {
			f.nameEvents()
		}
	case RecordEventUpdate:
		if len(body) >= 16 && binary.LittleEndian.Uint64(body) == eventUpdateName {
			if e := f.dec.EventByID(binary.LittleEndian.Uint64(body[8:])); e != nil {
				e.Name = cstring(body[16:])
			}
		}
	}
	return nil
}

// addAttrRecord adds the event a HEADER_ATTR record describes: its
// attribute and its ids.
func (f *File) addAttrRecord(body []byte) error {
	a, err := ParseAttr(body)
	if err != nil {
		return fmt.Errorf("%w: HEADER_ATTR record: %v", ErrFormat, err)
	}
	e := &Event{Attr: a, Name: DefaultName(&a)}
	for rest := body[a.Size:]; len(rest) >= 8; rest = rest[8:] {
		e.IDs = append(e.IDs, binary.LittleEndian.Uint64(rest))
	}
	if err := f.dec.AddEvent(e); err != nil {
		return fmt.Errorf("%w: HEADER_ATTR record: %v", ErrFormat, err)
	}
	f.Events = append(f.Events, e)
	return nil
}

// prescan reads the start of a stream, up to its first sample, to take
// in the records that describe its events and features; Records reads
// them again but does not take them in twice.
func (f *File) prescan() error {
	f.dec, _ = NewDecoder()
	s := f.newStream()
	defer s.release()
	for {
		h, body, off, err := s.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if h.Type == RecordSample || h.Type == RecordFinishedRound || h.Type == RecordFinishedInit ||
			h.Type == RecordCompressed || h.Type == RecordCompressed2 {
			break
		}
		switch h.Type {
		case RecordHeaderAttr, RecordHeaderBuildID, RecordHeaderFeature, RecordEventUpdate,
			RecordHeaderTracingData, RecordAuxtrace:
			if err := f.record(s, h, body, off, nil); err != nil {
				return fmt.Errorf("record at offset %#x: %w", off, err)
			}
		}
	}
	if len(f.Events) == 0 {
		return fmt.Errorf("%w: a stream without event attributes (HEADER_ATTR records) before its samples", ErrFormat)
	}
	return nil
}

// decompress decodes the records a COMPRESSED record's payload
// completes. Records may straddle payloads: the rest waits in pending.
// perf compresses only what the kernel wrote: records of its own inside
// are passed on as they are, not taken in.
func (f *File) decompress(h Header, body []byte, fn func(Record) error) error {
	c := f.Features.Compression
	if c == nil || c.Type != compressZstd {
		return fmt.Errorf("%w: a COMPRESSED record, but the file names no zstd compression (HEADER_COMPRESSED)", ErrFormat)
	}
	payload := body
	if h.Type == RecordCompressed2 {
		if len(body) < 8 || binary.LittleEndian.Uint64(body) > uint64(len(body)-8) {
			return fmt.Errorf("%w: COMPRESSED2 record of %d bytes with a larger payload", ErrFormat, h.Size)
		}
		payload = body[8 : 8+binary.LittleEndian.Uint64(body)]
	}
	if f.zstd == nil {
		f.zstd = newZstdStream()
	}
	// perf decompresses each record into a buffer of the recording's
	// mmap_len bytes; room for twice that, for a record that also ends
	// the previous one's last records.
	limit := min(max(2*int(c.MmapLen), 1<<20), 64<<20)
	var err error
	if f.pending, err = f.zstd.feed(f.pending, payload, limit); err != nil {
		return fmt.Errorf("%w: %v", ErrFormat, err)
	}
	for len(f.pending) >= headerSize {
		h := readHeader(f.pending)
		if h.Size < headerSize {
			return fmt.Errorf("%w: decompressed record of %d bytes", ErrFormat, h.Size)
		}
		if int(h.Size) > len(f.pending) {
			break
		}
		if err := f.deliver(h, f.pending[headerSize:h.Size], fn); err != nil {
			return err
		}
		f.pending = f.pending[h.Size:]
	}
	return nil
}

// endCompressed ends the decompression of a pass over the records.
func (f *File) endCompressed() {
	f.zstd.close()
	f.zstd, f.pending = nil, nil
}

// readHeader reads a record header from the first 8 bytes of b.
func readHeader(b []byte) Header {
	le := binary.LittleEndian
	return Header{Type: le.Uint32(b), Misc: le.Uint16(b[4:]), Size: le.Uint16(b[6:])}
}

// stream reads records one after the other from a part of the file: in
// place when the file is kept (mapped: data), else through a window
// of it read by ReadAt (win, of the bytes from at on). The window is
// the faster reading of a file once, front to back: walking the records
// of a 219 MiB file in place took 120 to 155 ms on a VM where reading
// them through a window of 256 KiB took 28 ms (a page of the mapping
// first touched costs a fault and a TLB fill, the copy neither), and
// its pages are not the reader's resident memory.
type stream struct {
	data     []byte
	off, end int64
	dropped  int64 // data: the pages before this offset were given back
	r        io.ReaderAt
	win      []byte
	at       int64
	pooled   *[]byte // win's buffer, back to windows at release
}

// windowBytes is a window's size; one grows to hold a record (at most
// 64 KiB) whole. A variable so that tests read through small ones.
var windowBytes int64 = 256 << 10

// windows are the windows of streams that ended, for the next: the
// readers of a file's parts make one each per part.
var windows = sync.Pool{New: func() any { b := []byte(nil); return &b }}

// newStream reads the data section; release ends it.
func (f *File) newStream() *stream {
	start, end := f.dataStart, f.dataEnd
	if f.mapped != nil && end <= int64(len(f.mapped)) {
		return &stream{data: f.mapped, off: start, end: end, dropped: start}
	}
	return &stream{r: f.r, off: start, end: end, at: start}
}

// release gives the window back.
func (s *stream) release() {
	if s.pooled != nil {
		windows.Put(s.pooled)
		s.pooled, s.win = nil, nil
	}
}

// next reads the next record: its header, body and offset in the file.
// It returns io.EOF at the end of the data.
func (s *stream) next() (Header, []byte, int64, error) {
	off := s.off
	if off == s.end {
		return Header{}, nil, off, io.EOF
	}
	if s.end-off < headerSize {
		return Header{}, nil, off, fmt.Errorf("%w: %d stray bytes at offset %#x, the end of the data", ErrFormat, s.end-off, off)
	}
	b := s.data
	if b == nil {
		if off+headerSize > s.at+int64(len(s.win)) {
			if err := s.fill(off, headerSize); err != nil {
				return Header{}, nil, off, err
			}
		}
		b = s.win
		off -= s.at // b's offsets are the window's
	}
	h := readHeader(b[off:])
	if h.Size < headerSize || int64(h.Size) > s.end-s.off {
		return Header{}, nil, s.off, fmt.Errorf("%w: record of %d bytes (type %d) at offset %#x; the data ends at %#x", ErrFormat, h.Size, h.Type, s.off, s.end)
	}
	if s.data != nil {
		s.off += int64(h.Size)
		if s.off-s.dropped >= 2*dropWindow { // checked here: a call per record costs
			s.dropBehind()
		}
		return h, b[off+headerSize : s.off : s.off], off, nil
	}
	if off+int64(h.Size) > int64(len(b)) {
		if err := s.fill(s.off, int64(h.Size)); err != nil {
			return Header{}, nil, s.off, err
		}
		b, off = s.win, 0
	}
	at := s.off
	s.off += int64(h.Size)
	end := off + int64(h.Size)
	return h, b[off+headerSize : end : end], at, nil
}

// fill reads the window from off on: up to its size or the data's end,
// at least need bytes (which the data holds).
func (s *stream) fill(off, need int64) error {
	if s.pooled == nil {
		s.pooled = windows.Get().(*[]byte)
	}
	size := min(max(windowBytes, need), s.end-off)
	if int64(cap(*s.pooled)) < size {
		*s.pooled = make([]byte, size)
	}
	w := (*s.pooled)[:size]
	n, err := s.r.ReadAt(w, off)
	s.win, s.at = w[:n], off
	if int64(n) < need {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("reading the record at offset %#x: %w", off, err)
	}
	return nil
}

// dropWindow is how far behind the reading a mapped file's pages are
// given back, in steps of as much: records handed to other goroutines
// are read again from the page cache if they are still in use.
var dropWindow int64 = 8 << 20

// dropBehind gives back the pages of a mapped file more than dropWindow
// behind the reading; next calls it when the reading is twice that
// past the last pages given back.
func (s *stream) dropBehind() {
	page := int64(os.Getpagesize())
	lo := (s.dropped + page - 1) / page * page
	hi := (s.off - dropWindow) / page * page
	if hi > lo {
		mapfile.Drop(s.data[lo:hi])
	}
	s.dropped = hi
}

// skip skips n bytes of data that follow a record.
func (s *stream) skip(n uint64) error {
	if n > uint64(s.end-s.off) {
		return fmt.Errorf("%w: %d bytes of data after the record run past the end of the data at %#x", ErrFormat, n, s.end)
	}
	s.off += int64(n) // a window is read again where the next record is
	return nil
}
