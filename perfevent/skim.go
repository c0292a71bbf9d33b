package perfevent

import (
	"encoding/binary"
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
	a := &e.Attr
	st := a.SampleType
	if st&SampleCallchain == 0 {
		return false
	}
	off := 8 * bits.OnesCount64(st&beforeRead)
	if off > len(s.Body) {
		return true
	}
	c := &cursor{b: s.Body, off: off}
	if st&SampleRead != 0 {
		c.bytes("read values", readSize(a.ReadFormat, c))
	}
	n := c.u64("callchain length")
	if c.err != nil || n > uint64(len(s.Body)-c.off)/8 {
		return true
	}
	chain := s.Body[c.off : c.off+8*int(n)]
	for i := 0; i < len(chain); i += 8 {
		if binary.LittleEndian.Uint64(chain[i:]) == ContextKernel {
			return true
		}
	}
	return false
}
