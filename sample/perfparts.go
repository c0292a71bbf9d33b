package sample

import "bloop/perfevent"

// Parts are where a perf.data file's records can be read in parts, side
// by side (perfevent's File.Parts): SkimPerf passes them last, when the
// file has them.
type Parts []int64

func (Parts) entry() {}

// PerfParts is a perf.data file open to be read in parts.
type PerfParts struct {
	pf *perfevent.File
}

// OpenPerfParts opens the perf.data file at path to be read in the parts
// SkimPerf passed.
func OpenPerfParts(path string, parts Parts) (*PerfParts, error) {
	pf, err := perfevent.Open(path)
	if err != nil {
		return nil, err
	}
	if err := pf.SetParts(parts); err != nil {
		pf.Close()
		return nil, err
	}
	return &PerfParts{pf: pf}, nil
}

// Len is the number of parts.
func (p *PerfParts) Len() int { return len(p.pf.Parts()) - 1 }

// Scan calls f on the records of part i as ScanPerfLazy does on the
// file's, without the Meta, Lease, blobs and BuildIDs that come before
// and after them. Scans of different parts may run side by side.
func (p *PerfParts) Scan(i int, f func(Entry) error) error {
	return p.ScanSamples(i, func(ps *PerfSample) error { return f(ps) }, f)
}

// ScanSamples is Scan with the samples passed to sample, the other
// entries to f: a reader of the samples alone is called with each one
// directly, not through an Entry.
func (p *PerfParts) ScanSamples(i int, sample func(*PerfSample) error, f func(Entry) error) error {
	conv := newPerfConverter(p.pf)
	conv.lazy = true
	ps := &PerfSample{conv: conv}
	return p.pf.SkimPartSamples(i, func(r *perfevent.RawSample) error {
		ps.raw = r
		return sample(ps)
	}, func(r perfevent.Record) error { return conv.record(r, f) })
}

// Close closes the file.
func (p *PerfParts) Close() error { return p.pf.Close() }
