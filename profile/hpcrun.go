package profile

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"bloop/hpcrun"
	"bloop/meas"
	"bloop/par"
	"bloop/structfile"
)

// An HPCToolkit measurement directory holds one .hpcrun profile per
// thread: a calling-context tree hpcrun unwound, and metric values at its
// nodes. Each node's instruction is expanded into the static scopes of
// its module (structs/ when hpcstruct or bloop struct wrote it, else
// bloop's analysis), as hpcprof does; the trees of the threads are the
// profile's threads.

// realScale turns a real metric's values (seconds of REALTIME,
// CPUTIME, ...) into the integers the trees add: nano-units.
const realScale = 1e9

// MeasInfo is what a measurement directory says of itself.
type MeasInfo struct {
	Dir      string
	Profiles int // .hpcrun files read
	// Log sums the SUMMARY lines of hpcrun's .log files: samples taken,
	// recorded, blocked (not taken in unsafe code), errant (unwind
	// failed), and the frames of their call paths.
	Log  [4]uint64
	Logs int
	// Partial are the values under hpcrun's partial-unwind root, per event.
	Partial []uint64
}

// measurements is the Source of an HPCToolkit measurement directory:
// its profiles, read by prepare, are the paths' threads.
type measurements struct {
	dir string
	// files are the readable profiles, profs their headers, metrics and
	// load maps (prepare drops their trees: paths reads them again).
	files   []string
	profs   []*hpcrun.Profile
	mods    []map[uint16]*Module // per profile, by load-map id
	metrics [][]int              // per profile, metric index to event index
}

// readWindow is how many profiles are read side by side, and held at
// once: an MPI job's directory holds hundreds, and the memory a report
// needs should not grow with them.
func readWindow(jobs int) int { return 4 * max(1, jobs) }

// readProfiles reads files side by side (jobs at once) and calls f with
// each, in the files' order, a window of them at a time.
func readProfiles(files []string, jobs int, f func(i int, hp *hpcrun.Profile, err error)) {
	w := readWindow(jobs)
	profs := make([]*hpcrun.Profile, w)
	errs := make([]error, w)
	for lo := 0; lo < len(files); lo += w {
		n := min(w, len(files)-lo)
		par.For(max(1, jobs), n, func(i int) { profs[i], errs[i] = hpcrun.Read(files[lo+i]) })
		for i := range n {
			f(lo+i, profs[i], errs[i])
			profs[i] = nil
		}
	}
}

// prepare reads the profiles, the events they measure and their modules.
func (ms *measurements) prepare(p *Profile) error {
	dir := ms.dir
	files, err := meas.Profiles(dir)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("%s: a directory without .hpcrun profiles: not an hpcrun measurement directory", dir)
	}
	p.Meas = &MeasInfo{Dir: dir}
	// The profiles are read side by side, a window at a time, in the
	// files' order; only what comes before their trees is kept.
	readProfiles(files, p.opt.Jobs, func(i int, hp *hpcrun.Profile, err error) {
		if err != nil {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%v: its samples are not in the report", err))
			return
		}
		ms.files = append(ms.files, files[i])
		ms.mods = append(ms.mods, measModules(p.sp, dir, hp))
		hp.Nodes, hp.Values = nil, nil
		ms.profs = append(ms.profs, hp)
	})
	if len(ms.profs) == 0 {
		return fmt.Errorf("%s: no readable .hpcrun profile (%s)", dir, strings.Join(p.Warnings, "; "))
	}
	p.Meas.Profiles = len(ms.profs)
	p.readLogs(dir)
	ms.metrics = p.measMetrics(ms.profs)
	if err := p.selectEvent(dir, p.opt.Event); err != nil {
		return err
	}
	p.Meas.Partial = make([]uint64, len(p.EventTotals))
	p.bindMeasStructures(dir, p.sp.sortedModules())
	return nil
}

// paths gives the values of each profile, a thread each, read again
// (side by side, a window at a time) and let go once given.
func (ms *measurements) paths(p *Profile, add func(Path)) error {
	readProfiles(ms.files, p.opt.Jobs, func(i int, hp *hpcrun.Profile, err error) {
		if err != nil {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%v: changed while read: its samples are not in the report", err))
			return
		}
		p.addThread(uint32(i), hp, ms.mods[i], ms.metrics[i], add)
	})
	return nil
}

// measMetrics makes the events of the report: every metric with values
// (not a derived formula) of any profile, by name, in order of first
// appearance; it returns each profile's metric index to event index.
func (p *Profile) measMetrics(profs []*hpcrun.Profile) [][]int {
	index := map[string]int{}
	out := make([][]int, len(profs))
	for i, hp := range profs {
		out[i] = make([]int, len(hp.Metrics))
		for j, m := range hp.Metrics {
			if m.Formula != "" {
				out[i][j] = -1
				continue
			}
			ev, ok := index[m.Name]
			if !ok {
				ev = len(p.Meta.Events)
				index[m.Name] = ev
				p.Meta.Events = append(p.Meta.Events, m.Name)
				scale := 1.0
				if m.Real {
					scale = 1 / realScale
				}
				p.EventScale = append(p.EventScale, scale)
			}
			out[i][j] = ev
		}
	}
	if len(profs) > 0 {
		p.Meta.Command = []string{profs[0].Get("program-path")}
	}
	return out
}

// measModules opens the modules a profile's nodes are in, by load-map
// id. A module's file is its recorded path; a vdso copy recorded under
// the directory's name at run time is found in its vdso/ now; a file
// gone from its path is looked for by name in the module directories.
func measModules(sp *space, dir string, hp *hpcrun.Profile) map[uint16]*Module {
	used := map[uint16]bool{}
	for _, n := range hp.Nodes {
		used[n.Module] = true
	}
	out := map[uint16]*Module{}
	for _, lm := range hp.LoadMap {
		if !used[lm.ID] || lm.ID == 0 {
			continue
		}
		if release, ok := hpcrun.KernelRelease(lm.Path); ok {
			// The kernel's frames (bloop report --hpcrun writes them so,
			// as hpcrun does): named from this machine's kallsyms when
			// it runs the kernel they were recorded on.
			out[lm.ID] = sp.kernelModule(release)
			continue
		}
		if _, ok := sp.mods[lm.Path]; !ok {
			if file, ok := meas.Locate(dir, sp.sysroot, lm.Path); ok {
				sp.files[lm.Path] = file
			} else if alt := sp.inModuleDirs(lm.Path, fileExists); alt != "" {
				sp.files[lm.Path] = alt
			}
		}
		out[lm.ID] = sp.module(lm.Path)
	}
	return out
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// bindMeasStructures binds the structure files of structs/ (and -struct
// files) to the modules they name, as hpcprof does: an LM's path must be
// the module's recorded path. A module whose file is here is checked
// against the structure first; one whose file is gone takes the
// structure on its name (the structure is all hpcprof has of it too).
func (p *Profile) bindMeasStructures(dir string, mods []*Module) {
	files := append(meas.StructFiles(dir), p.opt.StructFiles...)
	bad := func(err error) error {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%v: not used", err))
		return nil
	}
	var lms []structLM
	if p.opt.Cache != nil {
		lms = cachedStructLMs(p.opt.Cache, files, bad)
	} else {
		lms, _ = structLMs(files, bad)
	}
	load := structfile.Options{Load: p.sp.opt}
	for _, lm := range lms {
		for _, m := range mods {
			if filepath.Clean(lm.name) != m.Path || p.bound[m] != nil {
				continue
			}
			if m.Img != nil {
				var ok bool
				var why string
				if p.opt.Cache != nil {
					var err error
					if ok, why, err = checkCached(p.opt.Cache, lm, m, load); err != nil {
						bad(err)
						continue
					}
				} else {
					c := checkStructure(lm.node, m.Img)
					ok, why = c.ok(), c.String()
				}
				if !ok {
					p.Warnings = append(p.Warnings, fmt.Sprintf("structure file %s is of another build than %s (%s): not used", lm.file, m.Path, why))
					continue
				}
			}
			p.bound[m] = lm.index
		}
	}
}

// measPath is a node's place in the trees: its own frame and scopes
// below its parent's, and whether the path is complete. A node's whole
// path is put together only where it has values (path), so the nodes
// share their ancestors' instead of each holding a copy.
type measPath struct {
	parent  *measPath
	frame   Frame   // the node's instruction; no Mod: a placeholder
	scopes  []*Elem // the node's own scopes, outermost first
	partial bool
	err     error
}

// path puts mp's scopes (outermost first) and frames (innermost first)
// together, into the buffers given.
func (mp *measPath) path(scopes []*Elem, frames []Frame, chain []*measPath) ([]*Elem, []Frame, []*measPath) {
	scopes, frames, chain = scopes[:0], frames[:0], chain[:0]
	for a := mp; a != nil; a = a.parent {
		chain = append(chain, a)
		if a.frame.Mod != nil {
			frames = append(frames, a.frame)
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		scopes = append(scopes, chain[i].scopes...)
	}
	return scopes, frames, chain
}

// addThread passes one profile's values, at their nodes' paths, to add.
func (p *Profile) addThread(tid uint32, hp *hpcrun.Profile, mods map[uint16]*Module, events []int, add func(Path)) {
	label := threadLabel(hp)
	p.Comms[tid] = label
	if pid, err := strconv.ParseUint(hp.Get("process-id"), 10, 32); err == nil {
		p.setPid(tid, uint32(pid))
	}
	paths := make(map[uint32]*measPath, len(hp.Nodes))
	bad, firstBad := 0, ""
	for _, n := range hp.Nodes {
		var parent *measPath
		if n.Parent != 0 {
			parent = paths[n.Parent]
		}
		paths[n.ID] = p.measNode(n, parent, mods)
	}
	var (
		scopes = []*Elem{} // never nil: the path's scopes are given
		frames []Frame
		chain  []*measPath
		at     *measPath // the node scopes and frames are of
	)
	for _, v := range hp.Values {
		ev := events[v.Metric]
		if ev < 0 {
			continue
		}
		m := hp.Metrics[v.Metric]
		w := m.Float(v)
		if m.Real {
			w *= realScale
		}
		wi := uint64(math.Round(max(w, 0)))
		mp := paths[v.Node]
		if mp.err != nil {
			if bad++; bad == 1 {
				firstBad = mp.err.Error()
			}
			continue
		}
		if mp != at { // the values are grouped by node
			scopes, frames, chain = mp.path(scopes, frames, chain)
			at = mp
		}
		out := Complete
		if mp.partial {
			out = Failed
		}
		add(Path{Tid: tid, Frames: frames, Out: out, Scopes: scopes, Event: ev, Value: wi})
	}
	if bad > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%s: %d values at nodes that cannot be placed (%s): not in the report", label, bad, firstBad))
	}
}

// measNode places one node below its parent's path.
func (p *Profile) measNode(n hpcrun.Node, parent *measPath, mods map[uint16]*Module) *measPath {
	if parent != nil && parent.err != nil {
		return parent
	}
	mp := &measPath{parent: parent, partial: parent != nil && parent.partial}
	if n.Module == 0 {
		switch name := n.Placeholder(); name {
		case hpcrun.RootPrimary, hpcrun.FenceMain, hpcrun.FenceThread:
			// The roots and thread entries: the tree's root itself.
		case hpcrun.RootPartial:
			mp.partial = true
			mp.scopes = []*Elem{partial}
		default:
			mp.scopes = []*Elem{p.placeholder(name)}
		}
		return mp
	}
	m := mods[n.Module]
	if m == nil {
		return &measPath{err: fmt.Errorf("node %d in module %d, not in the load map", n.ID, n.Module)}
	}
	mp.frame = Frame{Mod: m, Addr: n.Offset}
	mp.scopes = p.scopesOf(mp.frame)
	return mp
}

// placeholder is the scope of one of hpcrun's placeholder nodes (idle,
// OpenMP and GPU operations, ...), named as hpcrun encodes it.
func (p *Profile) placeholder(name string) *Elem {
	name = strings.TrimSpace(name)
	if name == strings.TrimSpace(hpcrun.Unnormalized) {
		name = "unknown"
	}
	return p.elem(elemKey{kind: ElemProc, file: "<placeholder>" + name}, func() *Elem {
		return &Elem{Kind: ElemProc, Name: "<" + name + ">"}
	})
}

// threadLabel names a profile's thread: its rank and thread, its process.
func threadLabel(hp *hpcrun.Profile) string {
	s := fmt.Sprintf("thread %s", orDash(hp.Get("thread-id")))
	if r := hp.Get("mpi-rank"); r != "" && r != "0" {
		s = "rank " + r + " " + s
	}
	return fmt.Sprintf("%s (%s, pid %s)", s, hp.Get("program-name"), orDash(hp.Get("process-id")))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

var logSummary = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`SUMMARY: samples: (\d+) \(recorded: (\d+), blocked: (\d+), errant: (\d+)`)
})

// readLogs adds up hpcrun's own account of its samples, from the .log
// file beside each profile.
func (p *Profile) readLogs(dir string) {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	sort.Strings(logs)
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		m := logSummary().FindSubmatch(b)
		if m == nil {
			continue
		}
		p.Meas.Logs++
		for i := range p.Meas.Log {
			v, _ := strconv.ParseUint(string(m[i+1]), 10, 64)
			p.Meas.Log[i] += v
		}
	}
}
