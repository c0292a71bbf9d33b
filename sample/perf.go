package sample

import (
	"fmt"
	"io"
	"math/bits"
	"os"

	"bloop/perfevent"
)

// A perf.data file (perf record's output) is read as a recording too:
// ScanPerf passes the same values Scan does, so a report treats both
// alike. The conversion of the kernel's records is the recorder's own
// (perfMmap, perfComm, perfTask).

// BuildID is the build-id perf recorded for a module (its HEADER_BUILD_ID
// feature, or an MMAP2 record that carries one): the report checks the
// file on disk against it. Only perf.data files have them.
type BuildID struct {
	Path string
	ID   []byte
}

// regNums are the perf register numbers (each architecture's
// perf_regs.h) of the registers the unwinder starts from; -1: none. di is
// x86-64's rdi (vfork's return address while it is in the kernel), lr the
// link register.
type regNums struct{ ip, sp, bp, di, lr int }

// perfRegs are the register numbers by perf's name of the recording
// machine (uname -m, HEADER_ARCH): of a perf.data file of any host, and
// of this host's own recordings (hostArch).
var perfRegs = map[string]regNums{
	"x86_64":  {ip: 8, sp: 7, bp: 6, di: 5, lr: -1},
	"aarch64": {ip: 32, sp: 31, bp: 29, di: -1, lr: 30},
	"ppc64le": {ip: 32, sp: 1, bp: 31, di: -1, lr: 36},
}

// mask is the register mask (sample_regs_user) that selects r's registers.
func (r regNums) mask() uint64 {
	var m uint64
	for _, n := range []int{r.ip, r.sp, r.bp, r.di, r.lr} {
		if n >= 0 {
			m |= 1 << n
		}
	}
	return m
}

// read sets s's IP, SP, BP, DI and LR from a register block written for
// mask, when IP, SP and BP are in it (reporting whether they are).
func (r regNums) read(mask uint64, regs []uint64, s *Sample) bool {
	bp, ok1 := regAt(mask, regs, r.bp)
	sp, ok2 := regAt(mask, regs, r.sp)
	ip, ok3 := regAt(mask, regs, r.ip)
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	s.BP, s.SP, s.IP = bp, sp, ip
	s.DI, s.HasDI = regAt(mask, regs, r.di)
	s.LR, s.HasLR = regAt(mask, regs, r.lr)
	return true
}

// IsPerfFile reports whether the file at path is perf's (by its first
// bytes) rather than a bloop recording.
func IsPerfFile(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, 8)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return perfevent.IsPerfData(head[:n]), nil
}

// ScanPerf calls f on each record of a perf.data file as Scan does for a
// recording: first a Meta naming every event (Meta.Events), then Mmap
// (executable mappings only), Comm, Fork, Exit, *Sample (with its event,
// period and callchain; registers and stack with --call-graph dwarf),
// Lost, and last a BuildID per module perf recorded one for. Errors
// name the file.
func ScanPerf(path string, f func(Entry) error) error {
	return scanPerfAs(path, false, f)
}

// SkimPerf calls f as ScanPerf does but for the samples, which are
// walked, not decoded (perfevent's Skim): in their place comes one
// KernelFrames, at the first sample with kernel frames, and no Lease
// (nothing passed points into the file). A report's first pass, which
// needs everything but the samples, reads a file so at a fraction of
// the cost. Last come the Parts the file can be read in, when it has
// them.
func SkimPerf(path string, f func(Entry) error) error {
	return SkimPerfKept(path, nil, nil, f)
}

// ScanPerfLazy calls f as ScanPerf does but passes each sample as a
// *PerfSample, read in place or decoded as its reader asks: a report
// that has seen a sample's callchain before needs only its key.
func ScanPerfLazy(path string, f func(Entry) error) error {
	return scanPerfAs(path, true, f)
}

// scanPerfAs is ScanPerf, or ScanPerfLazy when lazy is set.
func scanPerfAs(path string, lazy bool, f func(Entry) error) error {
	pf, err := openPerf(path, f)
	if err != nil {
		return err
	}
	defer pf.Close()
	conv := newPerfConverter(pf)
	conv.lazy = lazy
	if copiesStacks(pf) {
		if err := f(&Lease{keep: pf.Keep}); err != nil {
			return err
		}
	}
	walk := pf.Records
	if lazy {
		walk = pf.Skim
	}
	if err := walk(func(r perfevent.Record) error { return conv.record(r, f) }); err != nil {
		return err
	}
	return perfTail(pf, nil, f)
}

// copiesStacks is whether an event of the file samples user stacks: what
// a Lease keeps (the rest of a sample is copied out of its record). A
// file without them is read faster through windows than kept mapped.
func copiesStacks(pf *perfevent.File) bool {
	for _, e := range pf.Events {
		if e.Attr.SampleType&perfevent.SampleStackUser != 0 {
			return true
		}
	}
	return false
}

// perfMeta describes a perf.data file: perf's command line, its events
// (the first is Meta.Event), the first event's frequency and stack copy.
func perfMeta(pf *perfevent.File) Meta {
	m := Meta{Command: pf.Features.Cmdline, Perf: true}
	for _, e := range pf.Events {
		m.Events = append(m.Events, e.Name)
		m.Clocks = append(m.Clocks, e.Attr.Clock())
	}
	if len(pf.Events) > 0 {
		a := &pf.Events[0].Attr
		m.Event = pf.Events[0].Name
		if a.Flags&perfevent.FlagFreq != 0 {
			m.Freq = uint32(a.SamplePeriod)
		}
		m.StackSize = a.SampleStackUser
	}
	m.OSRelease = pf.Features.OSRelease
	m.KernelBuildID = pf.Features.BuildIDs[perfevent.KernelMap]
	m.BuildIDs = pf.Features.BuildIDs
	return m
}

// perfConverter turns a perf.data file's records into a recording's.
type perfConverter struct {
	file *perfevent.File
	// regs are the register numbers of the recording machine, known
	// (regsOK) for the machines in perfRegs.
	regs   regNums
	regsOK bool
	s      Sample
	chain  []uint64
	// kernelSeen: a skimmed sample with kernel frames was announced.
	kernelSeen bool
	// lastEvent's index is lastIndex (eventIndex).
	lastEvent *perfevent.Event
	lastIndex int
	// lazy: samples are passed as ps (ScanPerfLazy).
	lazy bool
	ps   PerfSample
}

func newPerfConverter(pf *perfevent.File) *perfConverter {
	arch := pf.Features.Arch
	if arch == "" {
		arch = "x86_64" // files without HEADER_ARCH: perf's default
	}
	regs, ok := perfRegs[arch]
	return &perfConverter{file: pf, regs: regs, regsOK: ok}
}

func (c *perfConverter) record(r perfevent.Record, f func(Entry) error) error {
	switch r := r.(type) {
	case *perfevent.Sample:
		return f(c.sample(r))
	case *perfevent.RawSample:
		if c.lazy {
			c.ps.raw, c.ps.conv = r, c
			return f(&c.ps)
		}
		if !c.kernelSeen && r.KernelFrames() {
			c.kernelSeen = true
			return f(KernelFrames{})
		}
	case *perfevent.Mmap:
		if m, ok := perfMmap(r); ok {
			// The build-id first: a reader may open the module at its
			// mapping.
			if len(r.BuildID) > 0 {
				if err := f(BuildID{Path: r.Filename, ID: append([]byte(nil), r.BuildID...)}); err != nil {
					return err
				}
			}
			return f(m)
		}
	case *perfevent.Comm:
		return f(perfComm(r))
	case *perfevent.Task:
		t := perfTask(r)
		if r.Type == perfevent.RecordExit {
			return f(Exit(t))
		}
		return f(Fork(t))
	case *perfevent.Lost:
		return f(Lost(r.Lost))
	}
	return nil
}

// sample converts a sample: its event (index in Meta.Events), period,
// callchain, and, with --call-graph dwarf, BP, SP and IP from the user
// registers and the stack copy.
func (c *perfConverter) sample(r *perfevent.Sample) *Sample {
	s := &c.s
	*s = Sample{Pid: r.Pid, Tid: r.Tid, Time: r.Time, IP: r.IP, Period: r.Period,
		Callchain: r.Callchain, Kernel: r.CPUMode() == perfevent.MiscKernel, NoRegs: true}
	if s.Kernel {
		s.Callchain = c.kernelChain(r)
	}
	s.Event = c.eventIndex(r.Event)
	if r.Event.Attr.SampleType&perfevent.SamplePeriod == 0 {
		s.Period = r.Event.Attr.SamplePeriod // a fixed period (perf record -c)
	}
	if !c.regsOK || r.RegsABI == 0 || r.Event.Attr.SampleType&perfevent.SampleStackUser == 0 {
		return s
	}
	// The unwinder starts from the user registers, below the kernel's
	// frames of a sample taken in the kernel.
	if c.regs.read(r.Event.Attr.SampleRegsUser, r.Regs, s) {
		s.NoRegs = false
		s.StackSize, s.Stack = uint32(min(r.StackSize, 1<<31)), r.Stack
		s.StackKept = c.file.InFile()
	}
	return s
}

// eventIndex is e's index in the file's events.
func (c *perfConverter) eventIndex(e *perfevent.Event) int {
	if e == c.lastEvent {
		return c.lastIndex // a file's samples come in runs of an event
	}
	k := 0
	for i, f := range c.file.Events {
		if f == e {
			k = i
		}
	}
	c.lastEvent, c.lastIndex = e, k
	return k
}

// kernelChain returns the callchain of a sample taken in the kernel with
// its kernel part: perf's, or the sampled IP when it recorded none.
func (c *perfConverter) kernelChain(r *perfevent.Sample) []uint64 {
	for _, ip := range r.Callchain {
		if ip == perfevent.ContextKernel {
			return r.Callchain
		}
	}
	c.chain = append(append(c.chain[:0], perfevent.ContextKernel, r.IP), r.Callchain...)
	return c.chain
}

// regAt picks register reg from a register block written for mask: the
// kernel writes the selected registers in ascending number order.
func regAt(mask uint64, regs []uint64, reg int) (uint64, bool) {
	if reg < 0 || reg > 63 || mask&(1<<reg) == 0 {
		return 0, false
	}
	i := bits.OnesCount64(mask & (1<<reg - 1))
	if i >= len(regs) {
		return 0, false
	}
	return regs[i], true
}

// perfMmap converts an executable mapping; data mappings (perf record -d,
// or --call-graph dwarf, asks for them) are not load modules.
func perfMmap(r *perfevent.Mmap) (Mmap, bool) {
	m := Mmap{Pid: r.Pid, Tid: r.Tid, Addr: r.Addr, Len: r.Len, Pgoff: r.Pgoff,
		Prot: r.Prot, Flags: r.Flags, File: r.Filename, Time: r.Trailer.Time}
	if r.Type == perfevent.RecordMmap {
		m.Prot = protExec // MMAP records are of executable mappings, but with MiscMmapData
	}
	if r.Misc&perfevent.MiscMmapData != 0 || m.Prot&protExec == 0 {
		return m, false
	}
	return m, true
}

// protExec is PROT_EXEC.
const protExec = 4

func perfComm(r *perfevent.Comm) Comm {
	return Comm{Pid: r.Pid, Tid: r.Tid, Name: r.Comm, Time: r.Trailer.Time}
}

func perfTask(r *perfevent.Task) Task {
	return Task{Pid: r.Pid, Ppid: r.Ppid, Tid: r.Tid, Ptid: r.Ptid, Time: r.Time}
}
