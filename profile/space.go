package profile

import (
	"debug/elf"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"

	"bloop/cache"
	"bloop/loader"
	"bloop/sample"
	"bloop/unwind"
)

// Module is one load module seen in a recording.
type Module struct {
	Path string // as mapped: a file path or "[vdso]"
	Name string // basename
	Img  *loader.Image
	Unw  *unwind.Module
	Err  error // why the file could not be read (then frames in it cannot be unwound by recipe)
	// BuildID is the build-id note of the file read for the module, nil
	// when it has none: what its debug and source files are fetched by.
	BuildID []byte

	segs []elf.ProgHeader // PT_LOAD segments, to turn mapping offsets into file addresses

	structOnce sync.Once
	index      *scopeIndex
	kernel     *kernelSyms // the [kernel] module of perf.data files: its symbols
	// kbias is the kernel's load bias (KASLR) when Img is its vmlinux:
	// run-time address = vmlinux address + kbias.
	kbias uint64
}

// mapping places a module in a process's address space.
type mapping struct {
	lo, hi uint64
	bias   uint64 // runtime address = file address + bias
	time   uint64
	mod    *Module
	// alone: no other mapping of the process overlaps it (set by seal,
	// once the process's mappings are all known).
	alone bool
}

// space holds the address spaces of the recorded processes and the
// modules they map.
type space struct {
	opt     loader.Options
	mods    map[string]*Module
	procs   map[uint32][]mapping // by pid, in recording order
	times   map[uint32][]uint64  // by pid, its mappings' times in order (seal; epoch)
	blobs   map[string][]byte
	tmpDir  string
	modList []*Module
	// Perf.data files: the build-ids perf recorded by module path, the
	// directories to look for a module in when the recorded path has
	// another build (or none), and what was found wrong.
	buildIDs   map[string][]byte
	moduleDirs []string
	warnings   []string
	kernel     atomic.Pointer[Module] // the kernel's module, once made (kernelModule)
	kmu        sync.Mutex             // guards making it and what that appends to warnings
	ksyms      kernelLoad             // the kernel module's symbols
	// kcopy is perf's copy of the recording kernel's kallsyms (perfKallsyms),
	// "" without one; ktext is where the recording's boot had the kernel.
	kcopy string
	ktext kernelText
	// files are where modules are read when not at their recorded path
	// (a measurement directory's moved vdso copy, a module directory).
	files map[string]string
	// sysroot holds the recording machine's files (Options.Sysroot).
	sysroot string
	// fetcher fetches modules by build-id (Options.Fetcher), or nil.
	fetcher Fetcher
	// cache keeps the modules' unwinding bounds between reports
	// (Options.Cache), or nil.
	cache *cache.Cache
	// ahead are the modules being opened during the first pass, by the
	// goroutine that runs opens (prefetch.go).
	ahead map[string]*opening
	opens chan func()
}

func newSpace(opt loader.Options) *space {
	return &space{opt: opt, mods: map[string]*Module{}, procs: map[uint32][]mapping{}, blobs: map[string][]byte{},
		buildIDs: map[string][]byte{}, files: map[string]string{}}
}

// newSpaceFor is the space of a report under opt: its debug directories
// and module directories, and with a sysroot the recording machine's
// files and separate debug files under it.
func newSpaceFor(opt Options) *space {
	// A report reads the code at its samples and little else of its
	// modules: their files are mapped, not read whole, and a module's
	// DWARF is read when its scopes are not cached
	// (loader.Image.LoadDWARF, called by what needs it).
	lo := loader.Options{DebugDirs: loader.SysrootDebugDirs(opt.DebugDirs, opt.Sysroot), MapFiles: true, LazyDWARF: true}
	if opt.Fetcher != nil {
		lo.Fetcher = opt.Fetcher
	}
	sp := newSpace(lo)
	sp.moduleDirs, sp.sysroot, sp.fetcher, sp.cache = opt.ModuleDirs, opt.Sysroot, opt.Fetcher, opt.Cache
	return sp
}

// module opens (once) the module mapped from path.
func (s *space) module(path string) *Module {
	if m, ok := s.mods[path]; ok {
		return m
	}
	want, recorded := s.buildIDs[path]
	m, warn := s.prefetched(path, want, recorded)
	if m == nil {
		m, warn = s.open(path, want, recorded)
	}
	s.mods[path] = m
	s.modList = append(s.modList, m)
	if warn != "" {
		s.warnings = append(s.warnings, warn)
	}
	return m
}

// open opens the module at path, of recorded build-id want if recorded,
// with what was found wrong of its file (a warning, or ""). It reads the
// space only, but for a module without a file (the vdso), whose stored
// image it writes to a temporary file.
func (s *space) open(path string, want []byte, recorded bool) (*Module, string) {
	m := &Module{Path: path, Name: filepath.Base(path)}
	file := path
	if f, ok := s.files[path]; ok {
		file = f
	} else if alt, ok := loader.InSysroot(s.sysroot, path); ok {
		file = alt
	}
	if data, ok := s.blobs[path]; ok {
		// A module without a file (the vdso): analyse the stored image.
		if s.tmpDir == "" {
			s.tmpDir, m.Err = os.MkdirTemp("", "bloop-report-")
		}
		if m.Err != nil {
			return m, ""
		}
		file = filepath.Join(s.tmpDir, "vdso.so")
		if m.Err = os.WriteFile(file, data, 0o600); m.Err != nil {
			return m, ""
		}
		m.Name = "[vdso]"
	}
	f, file, warn, err := s.openChecked(path, file, want, recorded)
	if err != nil {
		m.Err = err
		return m, warn
	}
	m.BuildID = loader.BuildID(f)
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			m.segs = append(m.segs, p.ProgHeader)
		}
	}
	f.Close()
	lo := s.opt
	var memo *unwindMemo
	if _, blob := s.blobs[path]; s.cache != nil && !blob {
		// One memo, one key, for the image's symbol tables and its
		// unwinding's bounds and recipes. Not for a stored image: its
		// file is new each time, and hashed for the key (a few KB read
		// cost less than an entry written in the cache by every report).
		memo = &unwindMemo{c: s.cache, path: file, load: s.opt}
		lo.Memo = memo
	}
	img, err := loader.Open(file, lo)
	if err != nil {
		m.Err = err
		return m, warn
	}
	m.Img = img
	m.Unw = unwind.NewModule(img)
	m.Unw.Name = m.Name // the vdso's file is a copy
	if memo != nil {
		m.Unw.SetMemo(memo)
		m.Unw.LoadBoundsAhead()
	}
	return m, warn
}

// addMmap records an executable mapping.
func (s *space) addMmap(mm sample.Mmap) {
	if mm.Len == 0 || mm.File == "" || mm.File[0] == '[' && mm.File != "[vdso]" {
		return // anonymous code, [vsyscall]: nothing to analyse
	}
	m := s.module(mm.File)
	bias := mm.Addr - mm.Pgoff // right for the vdso and for files whose offsets equal addresses
	for _, p := range m.segs {
		pageOff := p.Off &^ 0xfff
		if pageOff <= mm.Pgoff && mm.Pgoff < p.Off+p.Filesz {
			// vaddr - off is the same for every byte of the segment.
			bias = mm.Addr - mm.Pgoff - (p.Vaddr - p.Off)
			break
		}
	}
	s.procs[mm.Pid] = append(s.procs[mm.Pid], mapping{lo: mm.Addr, hi: mm.Addr + mm.Len, bias: bias, time: mm.Time, mod: m})
}

// fork gives a new process a copy of its parent's mappings.
func (s *space) fork(t sample.Task) {
	if t.Pid == t.Ppid {
		return // a thread shares its process's mappings
	}
	if _, ok := s.procs[t.Pid]; !ok {
		s.procs[t.Pid] = append([]mapping(nil), s.procs[t.Ppid]...)
	}
}

// lookup finds the module holding runtime address addr in process pid at
// time t: the newest mapping made before t, else any.
func (s *space) lookup(pid uint32, addr, t uint64) (*Module, uint64, bool) {
	return lookupIn(s.procs[pid], addr, t)
}

// lookupIn is lookup in a process's mappings ms.
func lookupIn(ms []mapping, addr, t uint64) (*Module, uint64, bool) {
	if i := find(ms, addr, t); i >= 0 {
		return ms[i].mod, addr - ms[i].bias, true
	}
	return nil, 0, false
}

// find is the index of the mapping of ms lookup chooses for addr at
// time t, -1 if none.
func find(ms []mapping, addr, t uint64) int {
	best := -1
	for i := len(ms) - 1; i >= 0; i-- {
		m := &ms[i]
		if addr < m.lo || addr >= m.hi {
			continue
		}
		if m.time <= t {
			return i
		}
		if best < 0 {
			best = i
		}
	}
	return best
}

// near looks up many addresses of one process at one time (a stack's),
// the last one's mapping tried first: a stack's frames lie in few
// mappings, and a scan of a process's tens of mappings per frame was a
// tenth of a report of deep frame-pointer stacks.
type near struct {
	ms   []mapping
	t    uint64
	last int
}

func (s *space) near(pid uint32, t uint64) near {
	return near{ms: s.procs[pid], t: t, last: -1}
}

// lookup is space.lookup of addr in the process at the time.
func (n *near) lookup(addr uint64) (*Module, uint64, bool) {
	i := n.last
	// The last mapping is lookup's choice when it holds addr, was made
	// by then, and no other one overlaps it (find tries the later ones
	// first).
	if i < 0 || !n.ms[i].alone || addr < n.ms[i].lo || addr >= n.ms[i].hi || n.ms[i].time > n.t {
		if i = find(n.ms, addr, n.t); i < 0 {
			return nil, 0, false
		}
		n.last = i
	}
	return n.ms[i].mod, addr - n.ms[i].bias, true
}

// seal marks the mappings that overlap no other mapping of their
// process (mapping.alone), once every mapping is known: in the order of
// their starts, a mapping overlaps another when one before it ends past
// its start or the next starts before its end. (Only the later mappings
// matter to lookup, but this costs a sort, not a pass over the later
// ones for each: a process can have thousands, and each forked child
// has its own copy.)
func (s *space) seal() {
	var order []int
	for _, ms := range s.procs {
		order = order[:0]
		for i := range ms {
			order = append(order, i)
		}
		sort.Slice(order, func(a, b int) bool { return ms[order[a]].lo < ms[order[b]].lo })
		var end uint64 // the furthest end of the mappings before
		for k, i := range order {
			m := &ms[i]
			m.alone = (k == 0 || end <= m.lo) && (k+1 == len(order) || ms[order[k+1]].lo >= m.hi)
			end = max(end, m.hi)
		}
	}
	s.epochs()
}

// sortedModules lists the modules by path.
func (s *space) sortedModules() []*Module {
	out := append([]*Module(nil), s.modList...)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func (s *space) close() {
	if s.tmpDir != "" {
		os.RemoveAll(s.tmpDir)
	}
}
