package perfevent

import (
	"fmt"
	"math"
)

// A file's records can be read in parts, side by side: Skim notes where
// records begin about every PartBytes (Parts), and SkimPart walks the
// records of one part on a reader of its own. One reader walking a
// frame-pointer file's 1.3 million samples was the bound of a report;
// the records carry nothing that ties a part to the one before it once
// the mappings are known (Skim's pass), but for a stream's or perf's own
// records, and those make a file one part.

// PartBytes is about how many bytes of records a part holds: a few
// batches of a reader's samples, so that readers taking parts in turn
// keep each other's distance short. A variable so that tests cut small
// files into many parts.
var PartBytes int64 = 512 << 10

// Parts are the offsets, increasing, at which the last Skim saw records
// begin about PartBytes apart, the first the data's start and the last
// its end: part i is the records from Parts()[i] up to Parts()[i+1].
// Nil when the file is not read in parts: a stream (perf's pipe mode
// describes events as it goes), or data with records that change how
// later ones decode (events added in the data) or run through one
// another (compressed records: one decompression stream).
func (f *File) Parts() []int64 {
	if f.noParts || len(f.parts) < 2 || f.parts[len(f.parts)-1] != f.dataEnd {
		return nil
	}
	return f.parts
}

// SetParts sets the parts a file is read in (Parts of another File of
// the same file).
func (f *File) SetParts(parts []int64) error {
	for i, off := range parts {
		if off < f.dataStart || off > f.dataEnd || i > 0 && off <= parts[i-1] {
			return fmt.Errorf("%s: part %d at offset %#x: not in the data (%#x to %#x) after the one before", f.Path, i, off, f.dataStart, f.dataEnd)
		}
	}
	if f.Pipe || len(parts) < 2 || parts[0] != f.dataStart || parts[len(parts)-1] != f.dataEnd {
		return fmt.Errorf("%s: parts do not cover the data", f.Path)
	}
	f.parts, f.noParts = parts, false
	return nil
}

// markPart notes the record at off, of type typ, for Parts: called by
// Skim's walk for every record of the file's own data.
func (f *File) markPart(off int64, typ uint32) {
	switch typ {
	case RecordHeaderAttr, RecordCompressed, RecordCompressed2:
		// An event added, or records that only the decompression of
		// every one before them gives. (EVENT_UPDATE and HEADER_FEATURE
		// name and describe events, which the parts' readers need not
		// know: every file perf record writes has them.)
		f.noParts = true
	}
	if off >= f.nextPart {
		f.parts = append(f.parts, off)
		f.nextPart = off + PartBytes
	}
}

// SkimPart is Skim of the records of part i (Parts) alone. Calls for
// different parts may run side by side, on one File, while no other
// method runs; perf's records that describe the recording are not taken
// in again (Skim took them), and InFile is false: records are valid
// during the call.
func (f *File) SkimPart(i int, fn func(Record) error) error {
	return f.skimPart(i, nil, fn)
}

// SkimPartSamples is SkimPart with each sample passed to sample, the
// other records to fn: a reader of a part's samples is called for each
// without a Record's type switch between (2.2 million samples of a
// frame-pointer file, each passed through two of them and two closures,
// were 8% of a warm report's CPU).
func (f *File) SkimPartSamples(i int, sample func(*RawSample) error, fn func(Record) error) error {
	return f.skimPart(i, sample, fn)
}

func (f *File) skimPart(i int, sample func(*RawSample) error, fn func(Record) error) error {
	if i < 0 || i+1 >= len(f.parts) {
		return fmt.Errorf("%s: no part %d", f.Path, i)
	}
	g := &File{Path: f.Path, Events: f.Events, r: f.r, size: f.size,
		dataStart: f.parts[i], dataEnd: f.parts[i+1], dec: f.dec.clone(),
		applied: math.MaxInt64, part: true, onSample: sample}
	return g.walk(true, fn)
}

// clone is a decoder of the same events for another goroutine.
func (d *Decoder) clone() *Decoder {
	return &Decoder{events: d.events, byID: d.byID, sampleWord: d.sampleWord,
		trailerWord: d.trailerWord, unknown: map[uint32]int{}}
}
