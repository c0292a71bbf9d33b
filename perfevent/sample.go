package perfevent

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// decodeSample decodes a PERF_RECORD_SAMPLE: the fields its event's
// sample type selects, in the kernel's order. Slices point into body,
// but for the callchain and registers, which reuse the decoder's
// buffers: a sample costs no allocation.
func (d *Decoder) decodeSample(h Header, body []byte) (Record, error) {
	e, err := d.sampleEvent(body)
	if err != nil {
		return nil, err
	}
	s := &d.sample
	callchain, regs, intr := s.Callchain[:0], s.Regs[:0], s.IntrRegs[:0]
	*s = Sample{Header: h, Event: e}
	c := &cursor{b: body}
	a := &e.Attr
	st := a.SampleType
	if st&SampleIdentifier != 0 {
		s.ID = c.u64("identifier")
	}
	if st&SampleIP != 0 {
		s.IP = c.u64("ip")
	}
	if st&SampleTID != 0 {
		s.Pid, s.Tid = c.u32("pid"), c.u32("tid")
	}
	if st&SampleTime != 0 {
		s.Time = c.u64("time")
	}
	if st&SampleAddr != 0 {
		s.Addr = c.u64("addr")
	}
	if st&SampleID != 0 {
		s.ID = c.u64("id")
	}
	if st&SampleStreamID != 0 {
		s.StreamID = c.u64("stream id")
	}
	if st&SampleCPU != 0 {
		s.CPU = c.u32("cpu")
		c.u32("reserved")
	}
	if st&SamplePeriod != 0 {
		s.Period = c.u64("period")
	}
	// RawSample.KernelFrames finds the callchain past the fields above,
	// a word each (beforeRead), and the read values, without decoding.
	if st&SampleRead != 0 {
		s.Read = c.bytes("read values", readSize(a.ReadFormat, c))
	}
	if st&SampleCallchain != 0 {
		s.Callchain = c.u64s(callchain, "callchain", c.u64("callchain length"))
	}
	if st&SampleRaw != 0 {
		s.Raw = c.bytes("raw data", uint64(c.u32("raw size")))
	}
	if st&SampleBranchStack != 0 {
		s.BranchStack = c.bytes("branch stack", branchSize(a.BranchSampleType, c))
	}
	if st&SampleRegsUser != 0 {
		s.RegsABI, s.Regs = readRegs(c, regs, "user registers", "user registers ABI", a.SampleRegsUser)
	}
	if st&SampleStackUser != 0 {
		readStack(c, s)
	}
	decodeSampleTail(c, s, st, intr)
	if c.err != nil {
		return nil, fmt.Errorf("SAMPLE record of %s: %w", e.label(), c.err)
	}
	return s, nil
}

// decodeSampleTail reads the fields after the user stack.
func decodeSampleTail(c *cursor, s *Sample, st uint64, intr []uint64) {
	a := &s.Event.Attr
	if st&(SampleWeight|SampleWeightStruct) != 0 {
		s.Weight = c.u64("weight")
	}
	if st&SampleDataSrc != 0 {
		s.DataSrc = c.u64("data source")
	}
	if st&SampleTransaction != 0 {
		s.Transaction = c.u64("transaction")
	}
	if st&SampleRegsIntr != 0 {
		s.IntrABI, s.IntrRegs = readRegs(c, intr, "interrupt registers", "interrupt registers ABI", a.SampleRegsIntr)
	}
	if st&SamplePhysAddr != 0 {
		s.PhysAddr = c.u64("physical address")
	}
	if st&SampleCgroup != 0 {
		s.Cgroup = c.u64("cgroup")
	}
	if st&SampleDataPageSize != 0 {
		s.DataPageSize = c.u64("data page size")
	}
	if st&SampleCodePageSize != 0 {
		s.CodePageSize = c.u64("code page size")
	}
	if st&SampleAux != 0 {
		s.Aux = c.bytes("aux data", c.u64("aux size"))
	}
}

// sampleEvent finds the event that took a sample.
func (d *Decoder) sampleEvent(body []byte) (*Event, error) {
	switch {
	case len(d.events) == 0:
		return nil, fmt.Errorf("SAMPLE record without an event attribute to decode it")
	case len(d.events) == 1:
		return d.events[0], nil
	}
	at := 8 * d.sampleWord
	if at+8 > len(body) {
		return nil, fmt.Errorf("SAMPLE record of %d bytes ends before its event id at byte %d", len(body)+headerSize, at+headerSize)
	}
	id := binary.LittleEndian.Uint64(body[at:])
	if e := d.byID[id]; e != nil {
		return e, nil
	}
	return nil, fmt.Errorf("SAMPLE record has event id %d, which no event has", id)
}

// readSize is the size of the read values, which for a group depends on
// its leading count (peeked at, not consumed).
func readSize(format uint64, c *cursor) uint64 {
	perValue := uint64(1)
	if format&FormatID != 0 {
		perValue++
	}
	if format&FormatLost != 0 {
		perValue++
	}
	times := uint64(0)
	if format&FormatTotalTimeEnabled != 0 {
		times++
	}
	if format&FormatTotalTimeRunning != 0 {
		times++
	}
	if format&FormatGroup == 0 {
		return 8 * (perValue + times)
	}
	nr, ok := c.peekCount("read group", perValue)
	if !ok {
		return 0
	}
	return 8 * (1 + times + nr*perValue)
}

// branchSize is the size of a branch stack: its count, the hardware
// index, three words per branch and a counter word per branch when the
// branch sample type asks for them.
func branchSize(bst uint64, c *cursor) uint64 {
	perBranch, fixed := uint64(3), uint64(1)
	if bst&BranchHWIndex != 0 {
		fixed++
	}
	if bst&BranchCounters != 0 {
		perBranch++
	}
	nr, ok := c.peekCount("branch stack", perBranch)
	if !ok {
		return 0
	}
	return 8 * (fixed + nr*perBranch)
}

// readRegs reads a register block: its ABI word and, unless the ABI is
// 0 (none: a kernel thread has no user registers), one word per bit of
// the mask, in ascending register number.
func readRegs(c *cursor, dst []uint64, what, abiWhat string, mask uint64) (uint64, []uint64) {
	abi := c.u64(abiWhat)
	if abi == 0 {
		return 0, dst
	}
	return abi, c.u64s(dst, what, uint64(bits.OnesCount64(mask)))
}

// readStack reads the user stack copy: its reserved size, the bytes and
// how many of them the kernel filled. A record without user registers
// has size 0 and nothing else.
func readStack(c *cursor, s *Sample) {
	s.StackSize = c.u64("user stack size")
	if s.StackSize == 0 {
		return
	}
	data := c.bytes("user stack", s.StackSize)
	dyn := c.u64("user stack dynamic size")
	if c.err != nil {
		return
	}
	if dyn > s.StackSize {
		c.err = fmt.Errorf("user stack of %d bytes says %d were copied", s.StackSize, dyn)
		return
	}
	s.Stack = data[:dyn]
}
