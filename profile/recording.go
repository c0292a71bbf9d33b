package profile

import (
	"sort"

	"bloop/sample"
	"bloop/unwind"
)

// recording is a Source of sample records: a bloop recording, or a
// perf.data file read as one (scan tells which). Its samples are
// unwound here, or taken as perf's callchains.
type recording struct {
	path string
	scan func(path string, f func(sample.Entry) error) error
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
	err = r.scan(r.path, func(e sample.Entry) error {
		switch v := e.(type) {
		case sample.Meta:
			p.Meta = v
		case sample.BuildID:
			sp.buildIDs[v.Path] = v.ID
		case sample.Mmap:
			mmaps = append(mmaps, v)
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
		}
		return nil
	})
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
	return p.bindStructures(lms, sp.sortedModules())
}

// paths unwinds each sample (a second pass over the file).
func (r *recording) paths(p *Profile, add func(Path)) error {
	return r.scan(r.path, func(e sample.Entry) error {
		if s, ok := e.(*sample.Sample); ok {
			add(p.samplePath(s))
		}
		return nil
	})
}

// samplePath is a sample's path: its callchain or IP as perf recorded
// them when it has no registers, else its stack unwound (kernel frames,
// from the callchain, innermost), with the unwind's account kept.
func (p *Profile) samplePath(s *sample.Sample) Path {
	x := Path{Tid: s.Tid, Event: s.Event, Value: 1}
	p.pids[s.Tid] = s.Pid
	if p.Meta.Perf {
		x.Value = s.Period
	}
	if s.NoRegs {
		x.Frames, x.Out = p.sp.chainFrames(s, p.Meta.OSRelease)
		p.Chains++
		return x
	}
	st, look := stackOf(s), p.sp.lookupAt(s.Pid, s.Time)
	u := unwind.Unwind(st, look)
	x.Frames, x.Out = p.sp.framesAt(s.Pid, s.Time, u.PCs), u.Out
	p.Outcomes[u.Out]++
	p.FPOutcomes[unwind.UnwindFP(st, look)]++
	p.FPSteps += uint64(u.FPSteps)
	if u.Out == Truncated {
		p.Truncated++
	}
	if u.Out == Complete {
		p.StackUse = max(p.StackUse, u.StackUse)
	}
	if u.Reason != "" {
		p.Reasons[u.Reason]++
	}
	if s.Kernel {
		x.Frames = append(p.sp.kernelFrames(s, p.Meta.OSRelease), x.Frames...)
	}
	return x
}
