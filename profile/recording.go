package profile

import (
	"sort"

	"bloop/perfevent"
	"bloop/sample"
	"bloop/unwind"
)

// recording is a Source of sample records: a bloop recording, or a
// perf.data file read as one (scan tells which). Its samples are
// unwound here, or taken as perf's callchains.
type recording struct {
	path string
	scan func(path string, f func(sample.Entry) error) error
	// skim scans everything but the samples (most of the decoding),
	// for prepare.
	skim func(path string, f func(sample.Entry) error) error
	// skimKept is set when the skim can be kept in the cache (skimCached).
	skimKept bool
	// lazy, when the source has it, scans as scan does but passes the
	// samples as *sample.PerfSample (pathsParallel's memo).
	lazy func(path string, f func(sample.Entry) error) error
	// parts are where the skim saw the file can be read in parts, and
	// openParts, when the source has it, opens it so (parts.go).
	parts     sample.Parts
	openParts func(path string, parts sample.Parts) (partReader, error)
}

// prepare reads everything but the samples: mappings come before the
// samples that need them, but per-CPU buffers interleave, so take them
// all, then replay mappings and forks in time order.
func (r *recording) prepare(p *Profile) error {
	lms, err := structLMs(p.opt.StructFiles, func(err error) error { return err })
	if err != nil {
		return err
	}
	sp := p.sp
	var mmaps []sample.Mmap
	var forks []sample.Task
	skim := r.skim
	if r.skimKept {
		skim = func(path string, f func(sample.Entry) error) error { return skimCached(sp.cache, path, f) }
	}
	err = skim(r.path, func(e sample.Entry) error {
		switch v := e.(type) {
		case sample.Meta:
			p.Meta = v
			sp.kcopy = perfKallsyms(v.KernelBuildID)
		case sample.BuildID:
			sp.buildIDs[v.Path] = v.ID
		case sample.Mmap:
			if sym, ok := perfevent.KernelRelocSym(v.File); ok && v.Pgoff != 0 {
				sp.ktext = kernelText{sym, v.Pgoff} // 0: perf did not know
			}
			mmaps = append(mmaps, v)
			if p.Meta.Perf && v.Len != 0 {
				sp.prefetch(v.File, p.Meta.BuildIDs)
			}
		case sample.Fork:
			forks = append(forks, sample.Task(v))
		case sample.Comm:
			p.Comms[v.Tid] = v.Name
		case sample.Lost:
			p.Lost += uint64(v)
		case sample.Stats:
			p.Stats, p.HasStats = v, true
		case sample.Status:
			p.Stats.Apply(v)
		case sample.Blob:
			sp.blobs[v.Name] = v.Data
		case sample.Parts:
			r.parts = v
		case sample.KernelFrames:
			// Kernel frames need the kernel's symbols: read them while
			// the files are.
			sp.ksyms.start(sp.cache, sp.kernelSource(p.Meta.OSRelease))
		}
		return nil
	})
	sp.endPrefetch()
	if err != nil {
		return err
	}
	if err := p.selectEvent(r.path, p.opt.Event); err != nil {
		return err
	}
	// A child process inherits the mappings its parent had when it
	// forked.
	sort.SliceStable(forks, func(i, j int) bool { return forks[i].Time < forks[j].Time })
	sort.SliceStable(mmaps, func(i, j int) bool { return mmaps[i].Time < mmaps[j].Time })
	for i, j := 0, 0; i < len(mmaps) || j < len(forks); {
		if j == len(forks) || i < len(mmaps) && mmaps[i].Time <= forks[j].Time {
			sp.addMmap(mmaps[i])
			i++
		} else {
			sp.fork(forks[j])
			j++
		}
	}
	sp.seal()
	p.deferScopes = true
	return p.bindStructures(lms, sp.sortedModules())
}

// paths unwinds each sample (a second pass over the file), on
// p.opt.Jobs workers when there are more than one.
func (r *recording) paths(p *Profile, add func(Path)) error {
	if p.opt.Jobs > 1 {
		return r.pathsParallel(p, add)
	}
	return r.scan(r.path, func(e sample.Entry) error {
		if s, ok := e.(*sample.Sample); ok {
			x := p.sp.unwindSample(s, &p.Meta, nil)
			p.account(&x)
			add(x.Path)
		}
		return nil
	})
}

// unwound is one sample's path with the account of how it was found:
// what a worker computes without touching the profile.
type unwound struct {
	Path
	chain    bool   // taken as perf recorded it, not unwound
	pid      uint32 // the thread's process
	fp       Outcome
	fpSteps  int
	stackUse uint64
	reason   string
}

// unwindSample is a sample's path: its callchain or IP as perf recorded
// them when it has no registers, else its stack unwound (kernel frames,
// from the callchain, innermost). It reads the space only, so workers
// may run it side by side. The frames are appended to arena (a batch's,
// reused: one allocation per frame slice was a fifth of a worker's
// time on a frame-pointer file); x.Frames is the part appended.
func (sp *space) unwindSample(s *sample.Sample, meta *sample.Meta, arena *[]Frame) unwound {
	var own []Frame
	if arena == nil {
		arena = &own
	}
	start := len(*arena)
	x := sp.unwindInto(s, meta, arena)
	x.Frames = (*arena)[start:len(*arena):len(*arena)]
	return x
}

// unwindInto is unwindSample appending the frames to *arena.
func (sp *space) unwindInto(s *sample.Sample, meta *sample.Meta, arena *[]Frame) unwound {
	x := unwound{Path: Path{Tid: s.Tid, Event: s.Event, Value: 1}, pid: s.Pid}
	if meta.Perf {
		x.Value = s.Period
	}
	if s.NoRegs {
		*arena, x.Out = sp.chainFrames(s, meta.OSRelease, *arena)
		x.chain = true
		return x
	}
	st, look := stackOf(s), sp.lookupAt(s.Pid, s.Time)
	u := unwind.Unwind(st, look)
	if s.Kernel {
		*arena = sp.kernelFrames(s, meta.OSRelease, *arena)
	}
	*arena, x.Out = sp.framesAt(s.Pid, s.Time, u.PCs, *arena), u.Out
	x.fp, x.fpSteps, x.stackUse, x.reason = unwind.UnwindFP(st, look), u.FPSteps, u.StackUse, u.Reason
	return x
}

// account keeps the unwind's figures of one sample, in sample order.
func (p *Profile) account(x *unwound) {
	p.setPid(x.Tid, x.pid)
	if x.chain {
		p.Chains++
		return
	}
	p.Outcomes[x.Out]++
	p.FPOutcomes[x.fp]++
	p.FPSteps += uint64(x.fpSteps)
	if x.Out == Truncated {
		p.Truncated++
	}
	if x.Out == Complete {
		p.StackUse = max(p.StackUse, x.stackUse)
	}
	if x.reason != "" {
		p.Reasons[x.reason]++
	}
}

// setPid keeps thread tid's process: the last one seen of it. A map
// write a sample was 4% of a report of a frame-pointer file whose
// threads' samples come in long runs: the last one written is skipped.
func (p *Profile) setPid(tid, pid uint32) {
	if p.lastPid.set && p.lastPid.tid == tid && p.lastPid.pid == pid {
		return
	}
	p.pids[tid] = pid
	p.lastPid = tidPid{tid, pid, true}
}

// tidPid is a thread's process, set once written.
type tidPid struct {
	tid, pid uint32
	set      bool
}
