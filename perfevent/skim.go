package perfevent

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// RawSample is a PERF_RECORD_SAMPLE that Skim passes undecoded: its
// header and the bytes after it, valid during the call as any record's.
type RawSample struct {
	Header
	Body []byte
	dec  *Decoder
}

// beforeRead are the sample fields of one word each that come before the
// read values and the callchain, in the kernel's order.
const beforeRead = SampleIdentifier | SampleIP | SampleTID | SampleTime | SampleAddr |
	SampleID | SampleStreamID | SampleCPU | SamplePeriod

// KernelFrames reports whether the sample, decoded, would show kernel
// frames: taken in the kernel (its header's cpumode), or with a
// PERF_CONTEXT_KERNEL marker in its callchain. The cpumode alone does
// not tell: the kernel writes the callchain from the interrupted
// registers, which need not be the sampled instruction's (x86's PEBS
// records, ppc64's SIAR report a user IP for an interrupt taken in the
// kernel), so the callchain is read, found by the event's sample type;
// nothing else is decoded. A sample whose callchain cannot be found
// (one Decode refuses) answers true: a reader preparing for kernel
// frames is then never caught unprepared.
func (s *RawSample) KernelFrames() bool {
	if s.CPUMode() == MiscKernel {
		return true
	}
	e, err := s.dec.sampleEvent(s.Body)
	if err != nil {
		return true
	}
	if e.Attr.SampleType&SampleCallchain == 0 {
		return false
	}
	chain, ok := callchainIn(&e.Attr, s.Body)
	if !ok {
		return true
	}
	for i := 0; i < len(chain); i += 8 {
		if binary.LittleEndian.Uint64(chain[i:]) == ContextKernel {
			return true
		}
	}
	return false
}

// Decode decodes the sample as Records would have. An error from it,
// returned by the function Skim called, ends the walk as a record that
// cannot be decoded does under Records: naming the file and the
// record's offset.
func (s *RawSample) Decode() (*Sample, error) {
	rec, err := s.dec.decodeSample(s.Header, s.Body)
	if err != nil {
		return nil, decodeError{fmt.Errorf("%w: %v", ErrFormat, err)}
	}
	return rec.(*Sample), nil
}

// decodeError is a RawSample's that could not be decoded.
type decodeError struct{ err error }

func (e decodeError) Error() string { return e.err.Error() }
func (e decodeError) Unwrap() error { return e.err }

// inPlace are the sample fields Chain reads in place: the fields of one
// word each before the callchain, and the callchain. A sample of others
// (read values, a stack copy, registers, anything after the callchain)
// is decoded.
const inPlace = beforeRead | SampleCallchain

// ChainFields are a frame-pointer sample's fields, read in place: what
// Decode gives of them, the callchain as its words lie in the record
// (little-endian), valid as the RawSample is.
type ChainFields struct {
	Event               *Event
	Pid, Tid            uint32
	Time, IP, Period    uint64
	Callchain           []byte
	HasPeriod, HasChain bool
}

// Chain reads the sample's fields into out without decoding it, when
// its event samples only the fields of inPlace and the record holds
// them all (then Decode gives the same values, and no error); false
// otherwise. A report reads a frame-pointer file's samples so, and
// decodes only those whose callchain it has not seen.
func (s *RawSample) Chain(out *ChainFields) (ok bool) {
	e, err := s.dec.sampleEvent(s.Body)
	if err != nil {
		return false
	}
	st := e.Attr.SampleType
	if st&^inPlace != 0 {
		return false
	}
	b := s.Body
	off := 8 * bits.OnesCount64(st&beforeRead)
	if off > len(b) {
		return false
	}
	// The words in the kernel's order: identifier, IP, pid and tid,
	// time, address, id, stream id, CPU, period.
	le := binary.LittleEndian
	at := 0
	if st&SampleIdentifier != 0 {
		at += 8
	}
	*out = ChainFields{Event: e, HasPeriod: st&SamplePeriod != 0, HasChain: st&SampleCallchain != 0}
	if st&SampleIP != 0 {
		out.IP = le.Uint64(b[at:])
		at += 8
	}
	if st&SampleTID != 0 {
		out.Pid, out.Tid = le.Uint32(b[at:]), le.Uint32(b[at+4:])
		at += 8
	}
	if st&SampleTime != 0 {
		out.Time = le.Uint64(b[at:])
	}
	if out.HasPeriod {
		out.Period = le.Uint64(b[off-8:]) // the last of them
	}
	if !out.HasChain {
		return true
	}
	// No read values (not in inPlace): the callchain follows the words.
	out.Callchain, ok = chainAt(b, off)
	return ok
}

// callchainIn finds the callchain's words in the body b of a sample of
// an event of attribute a that has one: past the fields of one word
// each and the read values, as decodeSample reads them; false when b
// does not hold it.
func callchainIn(a *Attr, b []byte) ([]byte, bool) {
	off := 8 * bits.OnesCount64(a.SampleType&beforeRead)
	if off > len(b) {
		return nil, false
	}
	if a.SampleType&SampleRead != 0 {
		c := &cursor{b: b, off: off}
		c.bytes("read values", readSize(a.ReadFormat, c))
		if c.err != nil {
			return nil, false
		}
		off = c.off
	}
	return chainAt(b, off)
}

// chainAt is the callchain whose length is the word at off of b, and
// its words after it; false when b does not hold them.
func chainAt(b []byte, off int) ([]byte, bool) {
	if off < 0 || off+8 > len(b) {
		return nil, false
	}
	n := binary.LittleEndian.Uint64(b[off:])
	if n > uint64(len(b)-off-8)/8 {
		return nil, false
	}
	return b[off+8 : off+8+8*int(n)], true
}
