package sample

import "bloop/perfevent"

// PerfSample is a perf.data sample as ScanPerfLazy passes it, valid
// during the call: a frame-pointer sample's key read where it lies
// (Chain), or the sample decoded (Sample).
type PerfSample struct {
	raw  *perfevent.RawSample
	conv *perfConverter
}

func (*PerfSample) entry() {}

// ChainKey is what a sample with no registers or stack copy is made
// of, besides its time: the Sample that Sample decodes has Pid, Tid,
// IP, Period, Event and Kernel from these, and its Callchain is a
// function of them and of Callchain, the words as they lie in the
// record (little-endian), valid during the call. The fields read in
// place are perfevent's, Period the event's when the sample has none.
type ChainKey struct {
	perfevent.ChainFields
	Event  int // the index in Meta.Events (ChainFields.Event is the event)
	Kernel bool
}

// Chain reads the sample's key into k when the sample has no fields but
// those perfevent's RawSample.Chain reads in place; false otherwise
// (then Sample decodes it).
func (p *PerfSample) Chain(k *ChainKey) bool {
	f := &k.ChainFields
	if !p.raw.Chain(f) {
		return false
	}
	k.Event = p.conv.eventIndex(f.Event)
	k.Kernel = p.raw.CPUMode() == perfevent.MiscKernel
	if !f.HasPeriod {
		k.Period = f.Event.Attr.SamplePeriod // a fixed period (perf record -c)
	}
	return true
}

// Sample decodes the sample, as ScanPerf passes it. Its error, returned
// by the scan's function, ends the scan naming the file and record.
func (p *PerfSample) Sample() (*Sample, error) {
	r, err := p.raw.Decode()
	if err != nil {
		return nil, err
	}
	return p.conv.sample(r), nil
}
