package profile

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"bloop/atomicfile"
	"bloop/hpcrun"
	"bloop/meas"
)

// WriteHpcrun writes the profile's samples as an HPCToolkit measurement
// directory: one .hpcrun profile per thread (hpcrun's names and header),
// its calling-context tree the tree of stacks (instructions, not
// scopes: hpcprof adds the structure), every event a metric, the
// process's modules its load map, the vdso's bytes in vdso/. dir is made;
// one that already holds profiles is refused.
func (p *Profile) WriteHpcrun(dir string) error {
	if meas.IsMeasurementDir(dir) {
		return fmt.Errorf("%s already holds .hpcrun profiles: not written over", dir)
	}
	if len(p.stacks.threads) == 0 {
		return fmt.Errorf("%s not written: no samples to write", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return err
	}
	w := &hpcrunWriter{p: p, dir: abs, paths: map[*Module]string{}, stacks: map[uint32][]stack{}}
	for s := range p.stacks.list {
		w.stacks[s.tid] = append(w.stacks[s.tid], *s)
	}
	for _, t := range w.threads() {
		hp, err := w.profile(t)
		if err != nil {
			return err
		}
		name := filepath.Join(abs, hpcrun.FileName(t.program, t.rank, t.index, 0, t.pid, 0))
		err = atomicfile.Write(name, func(f io.Writer) error { return hpcrun.Write(f, hp) })
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// hpcrunWriter makes the profiles of WriteHpcrun.
type hpcrunWriter struct {
	p     *Profile
	dir   string
	paths map[*Module]string // load-map paths, once per module
	// stacks are each thread's, in the order of their first samples.
	stacks map[uint32][]stack
}

// hpcrunThread is a thread of the profile as hpcrun names it: its
// process's rank among the processes (0 with one), its index in its
// process (0: the main thread).
type hpcrunThread struct {
	tid, pid     uint32
	rank, index  int
	program      string // the executable's base name
	programPath  string
	root         nodeID
	multiProcess bool
}

// threads lists the threads with samples, by process and thread id.
func (w *hpcrunWriter) threads() []hpcrunThread {
	var ts []hpcrunThread
	for tid, root := range w.p.stacks.threads {
		ts = append(ts, hpcrunThread{tid: tid, pid: w.p.pids[tid], root: root})
	}
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].pid != ts[j].pid {
			return ts[i].pid < ts[j].pid
		}
		// The main thread first, then by id.
		if mi, mj := ts[i].tid == ts[i].pid, ts[j].tid == ts[j].pid; mi != mj {
			return mi
		}
		return ts[i].tid < ts[j].tid
	})
	rank, index := -1, 0
	for i := range ts {
		if i == 0 || ts[i].pid != ts[i-1].pid {
			rank, index = rank+1, 0
		}
		ts[i].rank, ts[i].index = rank, index
		index++
		ts[i].programPath = w.programPath(ts[i].pid)
		ts[i].program = strings.ReplaceAll(filepath.Base(ts[i].programPath), "/", "_")
	}
	for i := range ts {
		ts[i].multiProcess = rank > 0
	}
	return ts
}

// programPath is a process's executable: the last file it mapped whose
// name begins with its command name (the kernel keeps 15 bytes of the
// name), so a process that forked and then ran another program is named
// after that program; else the first file it mapped (the kernel
// maps the executable first); else the recorded command.
func (w *hpcrunWriter) programPath(pid uint32) string {
	ms := w.p.sp.procs[pid]
	if comm := w.p.Comms[pid]; comm != "" {
		for i := len(ms) - 1; i >= 0; i-- {
			if strings.HasPrefix(ms[i].mod.Name, comm) {
				return ms[i].mod.Path
			}
		}
	}
	for _, m := range ms {
		if !strings.HasPrefix(m.mod.Path, "[") {
			return m.mod.Path
		}
	}
	if c := w.p.Meta.Command; len(c) > 0 {
		return c[0]
	}
	return "program"
}

// profile makes one thread's profile.
func (w *hpcrunWriter) profile(t hpcrunThread) (*hpcrun.Profile, error) {
	hp := &hpcrun.Profile{Version: "04.00"}
	values := map[string]string{"program-name": t.program, "program-path": t.programPath, "mpi-rank": strconv.Itoa(t.rank),
		"thread-id": strconv.Itoa(t.index), "host-id": "0", "process-id": strconv.FormatUint(uint64(t.pid), 10),
		"trace-min-time": "0", "trace-max-time": "0", "trace-disorder": "0"}
	for _, name := range hpcrun.HeaderNames {
		hp.Header = append(hp.Header, [2]string{name, values[name]})
	}
	hp.IDTuple = []hpcrun.IDTuple{{Kind: hpcrun.Compose(hpcrun.KindNode, hpcrun.IDsLogicLocal)}}
	if t.multiProcess {
		r := uint64(t.rank)
		hp.IDTuple = append(hp.IDTuple, hpcrun.IDTuple{Kind: hpcrun.Compose(hpcrun.KindRank, hpcrun.IDsLogicOnly), Physical: r, Logical: r})
	}
	ix := uint64(t.index)
	hp.IDTuple = append(hp.IDTuple, hpcrun.IDTuple{Kind: hpcrun.Compose(hpcrun.KindThread, hpcrun.IDsLogicOnly), Physical: ix, Logical: ix})
	for i, name := range w.p.Meta.EventNames() {
		hp.Metrics = append(hp.Metrics, hpcrun.Metric{Name: name, Description: name, Real: w.real(i), Period: 1, Show: true, ShowPercent: true})
	}
	lm, err := w.loadMap(hp, t.pid)
	if err != nil {
		return nil, err
	}
	if err := w.tree(hp, t, lm); err != nil {
		return nil, err
	}
	return hp, nil
}

// real tells whether event i's values are real numbers (hpcrun's time
// metrics, kept in nano-units here).
func (w *hpcrunWriter) real(i int) bool {
	return i < len(w.p.EventScale) && w.p.EventScale[i] != 1 && w.p.EventScale[i] > 0
}

// loadMap is a process's modules, in the order it mapped them, by the
// ids its nodes use; frames' modules it did not map (a measurement
// directory's) come when first met.
type loadMap struct {
	w   *hpcrunWriter
	hp  *hpcrun.Profile
	ids map[*Module]uint16
}

func (w *hpcrunWriter) loadMap(hp *hpcrun.Profile, pid uint32) (*loadMap, error) {
	lm := &loadMap{w: w, hp: hp, ids: map[*Module]uint16{}}
	for _, m := range w.p.sp.procs[pid] {
		if _, err := lm.id(m.mod); err != nil {
			return nil, err
		}
	}
	return lm, nil
}

// id returns a module's load-map id, adding it to the map.
func (lm *loadMap) id(m *Module) (uint16, error) {
	if id, ok := lm.ids[m]; ok {
		return id, nil
	}
	path, err := lm.w.path(m)
	if err != nil {
		return 0, err
	}
	if len(lm.ids) == math.MaxUint16 {
		return 0, fmt.Errorf("more than %d modules in one process: more than a load map's ids", math.MaxUint16)
	}
	id := uint16(len(lm.ids) + 1)
	lm.ids[m] = id
	lm.hp.LoadMap = append(lm.hp.LoadMap, hpcrun.LoadModule{ID: id, Path: path})
	return id, nil
}

// analyse flags the module of a sampled frame for hpcstruct, as hpcrun
// flags the modules its unwinds looked into; not the kernel, nor a
// module without a file.
func (lm *loadMap) analyse(id uint16) {
	e := &lm.hp.LoadMap[id-1]
	if strings.HasPrefix(e.Path, "/") {
		e.Flags |= hpcrun.FlagAnalyze
	}
}

// path is a module's load-map path: its absolute path, hpcrun's name of
// the kernel, or the vdso's bytes written to vdso/ under their MD5 as
// hpcrun names the copy.
func (w *hpcrunWriter) path(m *Module) (string, error) {
	if p, ok := w.paths[m]; ok {
		return p, nil
	}
	p := m.Path
	switch {
	case m.kernel != nil:
		p = hpcrun.KernelModuleOf(w.p.Meta.OSRelease)
	case m.Path == "[vdso]" && w.p.sp.blobs[m.Path] != nil:
		data := w.p.sp.blobs[m.Path]
		sum := md5.Sum(data)
		p = filepath.Join(w.dir, "vdso", hex.EncodeToString(sum[:])+".vdso")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := atomicfile.WriteFile(p, data); err != nil {
			return "", fmt.Errorf("%s: %w", p, err)
		}
	case !strings.HasPrefix(p, "[") && !filepath.IsAbs(p):
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		p = abs
	}
	w.paths[m] = p
	return p, nil
}

// tree writes a thread's calling-context tree and its values: the
// complete stacks below hpcrun's primary root and the thread's entry,
// the partial ones below the partial root, a child of the primary one
// (hpcrun stitches it there, and hpcprof refuses a profile with another
// root than the primary); a node per instruction, its values those of
// the samples whose stack ends there.
func (w *hpcrunWriter) tree(hp *hpcrun.Profile, t hpcrunThread, lm *loadMap) error {
	// Node ids are even, as hpcrun's (it sets the low bit on nodes that
	// traces name).
	st := &w.p.stacks
	ids := map[nodeID]uint32{}
	add := func(n hpcrun.Node) uint32 {
		n.ID, n.Unwound = uint32(2*(len(hp.Nodes)+1)), true
		hp.Nodes = append(hp.Nodes, n)
		return n.ID
	}
	primary := add(hpcrun.Node{Offset: hpcrun.PlaceholderOffset(hpcrun.RootPrimary)})
	fence := hpcrun.FenceThread
	if t.index == 0 {
		fence = hpcrun.FenceMain
	}
	ids[t.root] = add(hpcrun.Node{Parent: primary, Offset: hpcrun.PlaceholderOffset(fence)})
	var chain []nodeID
	for _, s := range w.stacks[t.tid] {
		chain = chain[:0]
		for id := s.leaf; ids[id] == 0; id = st.node(id).parent {
			chain = append(chain, id)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			id := chain[i]
			n := st.node(id)
			f := st.frame(n)
			if f.Mod == nil { // [partial]: below the primary root, where hpcprof wants it
				ids[id] = add(hpcrun.Node{Parent: primary, Offset: hpcrun.PlaceholderOffset(hpcrun.RootPartial)})
				continue
			}
			mod, err := lm.id(f.Mod)
			if err != nil {
				return err
			}
			lm.analyse(mod)
			ids[id] = add(hpcrun.Node{Parent: ids[n.parent], Module: mod, Offset: f.Addr})
		}
		for ev, v := range s.values() {
			if v == 0 {
				continue
			}
			bits := uint64(v)
			if w.real(ev) {
				bits = math.Float64bits(float64(v) * w.p.EventScale[ev])
			}
			hp.Values = append(hp.Values, hpcrun.Value{Node: ids[s.leaf], Metric: uint16(ev), Bits: bits})
		}
	}
	return nil
}
