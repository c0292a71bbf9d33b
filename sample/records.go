package sample

// Entry is one record of a recording, or of a perf.data file read as
// one: Meta, Mmap, Comm, Fork, Exit, *Sample, Lost, Stats, Status, Blob
// or BuildID. The scanners pass records typed, so a reader's switch is
// over this closed set, not over any value.
type Entry interface{ entry() }

func (Meta) entry()    {}
func (Mmap) entry()    {}
func (Comm) entry()    {}
func (Fork) entry()    {}
func (Exit) entry()    {}
func (*Sample) entry() {}
func (Lost) entry()    {}
func (Stats) entry()   {}
func (Status) entry()  {}
func (Blob) entry()    {}
func (BuildID) entry() {}
