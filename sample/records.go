package sample

// Entry is one record of a recording, or of a perf.data file read as
// one: Meta, Mmap, Comm, Fork, Exit, *Sample, Lost, Stats, Status, Blob
// BuildID, *Lease or KernelFrames. The scanners pass records typed, so a reader's switch is
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
func (*Lease) entry()  {}

func (KernelFrames) entry() {}

// KernelFrames stands, in SkimPerf's entries, for the samples it does
// not decode: it comes once, where the first sample with kernel frames
// is (one a full scan passes with Kernel set or a kernel part in its
// Callchain), and not at all when none has them. A reader then knows
// early that the kernel's symbols will be needed.
type KernelFrames struct{}

// Lease comes first from a scan whose samples' stacks can outlive the
// call that passes them (a perf.data file with stack copies, mapped):
// a reader that hands samples to other goroutines calls Keep, then
// Release once they are done, and needs not copy the stacks of samples
// marked StackKept. A reader that ignores it gets stacks valid during
// the call only.
type Lease struct {
	keep    func() (release func(), ok bool)
	release func()
}

// Keep asks that the stacks outlive the calls; it reports whether they
// will (then Release must be called).
func (l *Lease) Keep() bool {
	if l.keep == nil || l.release != nil {
		return false
	}
	rel, ok := l.keep()
	l.release = rel
	return ok
}

// Release ends what Keep began.
func (l *Lease) Release() {
	if l.release != nil {
		l.release()
	}
}
