package profile

import (
	"bytes"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"bloop/loader"
	"bloop/perfevent"
	"bloop/sample"
	"bloop/unwind"
)

// Samples of perf.data files come in three kinds: with registers and a
// stack copy (--call-graph dwarf), unwound as bloop's own; with the
// kernel's callchain (-g, --call-graph fp), taken as given; and with
// the IP alone. Kernel frames, from the callchain's kernel part, go to
// one [kernel] module named from /proc/kallsyms.

// errBuildID marks a module whose file on disk is not the one recorded.
var errBuildID = errors.New("the file on disk has another build-id than the recorded module")

// openChecked opens a module's file (file: path, or the stored image of
// a module without one). When perf recorded the module's build-id and
// the file has another, or there is no file, a file of the same name
// and build-id in one of the module directories stands in, else perf's
// copy of it (perfCachedModule), else one fetched by build-id (last, as
// gdb asks debuginfod last); else the module is used without its file,
// with one warning. want is the build-id perf recorded, if recorded.
// It reads the space only (prefetch runs it beside the reading).
func (s *space) openChecked(path, file string, want []byte, recorded bool) (*elf.File, string, string, error) {
	f, err := elf.Open(file)
	if err == nil && (!recorded || bytes.Equal(loader.BuildID(f), want)) {
		return f, file, "", nil
	}
	var got []byte
	if f != nil {
		got = loader.BuildID(f)
		f.Close()
	}
	if recorded {
		var g *elf.File
		alt := s.inModuleDirs(path, func(alt string) bool {
			var err error
			if g, err = elf.Open(alt); err == nil && !bytes.Equal(loader.BuildID(g), want) {
				g.Close()
				return false
			}
			return err == nil
		})
		if alt != "" {
			return g, alt, "", nil
		}
		if g, alt := perfCachedModule(want); g != nil {
			return g, alt, "", nil
		}
		if g, alt := s.fetchModule(want); g != nil {
			return g, alt, "", nil
		}
	}
	if err != nil {
		warn := ""
		if recorded {
			warn = fmt.Sprintf("module %s (build-id %x): %v; its samples stay at their addresses", path, want, err)
		}
		return nil, "", warn, err
	}
	warn := fmt.Sprintf("module %s: build-id %s on disk, %x recorded; its samples stay at their addresses", path, hexOrNone(got), want)
	return nil, "", warn, fmt.Errorf("%w (%s on disk, %x recorded)", errBuildID, hexOrNone(got), want)
}

// fetchModule returns the module file of build-id id from the fetcher,
// opened, or nil. The fetcher checks the build-id and reports its own
// problems (once per run); the check here keeps a fetcher that does not
// from standing in a wrong file.
func (s *space) fetchModule(id []byte) (*elf.File, string) {
	if s.fetcher == nil || len(id) == 0 {
		return nil, ""
	}
	p, err := s.fetcher.Executable(id)
	if err != nil {
		return nil, ""
	}
	f, err := elf.Open(p)
	if err != nil {
		return nil, ""
	}
	if !bytes.Equal(loader.BuildID(f), id) {
		f.Close()
		return nil, ""
	}
	return f, p
}

// inModuleDirs returns the first file of path's base name in the module
// directories that ok accepts, or "".
func (s *space) inModuleDirs(path string, ok func(alt string) bool) string {
	for _, dir := range s.moduleDirs {
		if alt := filepath.Join(dir, filepath.Base(path)); ok(alt) {
			return alt
		}
	}
	return ""
}

func hexOrNone(id []byte) string {
	if len(id) == 0 {
		return "none"
	}
	return hex.EncodeToString(id)
}

// kernelModule is the one module of the kernel's frames, its symbols
// read once (nil when /proc/kallsyms is not readable, hides addresses,
// or belongs to another kernel than the recording's).
func (s *space) kernelModule(osRelease string) *Module {
	// Once made, the module is read without the lock, which every sample
	// with kernel frames took (2% of a report's CPU on g++'s perf.data,
	// where the readers meet kernel frames side by side).
	if k := s.kernel.Load(); k != nil {
		return k
	}
	// Unwinding workers meet kernel frames side by side.
	s.kmu.Lock()
	defer s.kmu.Unlock()
	if k := s.kernel.Load(); k != nil {
		return k
	}
	k := &Module{Path: "[kernel]", Name: "[kernel]", kernel: &kernelSyms{}}
	s.modList = append(s.modList, k)
	ks, note, err := s.ksyms.wait(s.cache, s.kernelSource(osRelease))
	if note != "" {
		s.warnings = append(s.warnings, note)
	}
	if err != nil {
		k.Err = err
	} else {
		k.kernel = ks
		s.openVmlinux(k, osRelease)
	}
	s.kernel.Store(k)
	return k
}

// vmlinuxDir holds Debian's kernel debug images (linux-image-*-dbg).
var vmlinuxDir = "/usr/lib/debug/boot"

// openVmlinux gives the kernel module the recording kernel's vmlinux,
// when its debug image is installed, so kernel frames get structure
// (inlined calls, loops, lines) as user code does. The load bias is
// where kallsyms puts _text against where vmlinux does.
func (s *space) openVmlinux(m *Module, osRelease string) {
	if osRelease == "" {
		b, err := os.ReadFile(releaseFile)
		if err != nil {
			return
		}
		osRelease = string(bytes.TrimSpace(b))
	}
	path := filepath.Join(vmlinuxDir, "vmlinux-"+osRelease)
	if _, err := os.Stat(path); err != nil {
		return
	}
	run, ok := m.kernel.addrOf("_text")
	if !ok {
		return
	}
	link, err := symbolAddr(path, "_text")
	if err != nil {
		s.warnings = append(s.warnings, fmt.Sprintf("kernel frames without structure: %v", err))
		return
	}
	img, err := loader.Open(path, s.opt)
	if err != nil {
		s.warnings = append(s.warnings, fmt.Sprintf("kernel frames without structure: %v", err))
		return
	}
	m.Img, m.kbias = img, run-link
}

// symbolAddr returns the address of the symbol name in the ELF file path.
func symbolAddr(path, name string) (uint64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	for _, sym := range syms {
		if sym.Name == name {
			return sym.Value, nil
		}
	}
	return 0, fmt.Errorf("%s: no symbol %s", path, name)
}

// chainFrames turns a sample without registers into frames, innermost
// first: its callchain as given (see chainPCs), else its IP. A chain is
// complete when it reaches an entry point, or holds
// only the sampled instruction (no call graph was recorded).
func (sp *space) chainFrames(s *sample.Sample, osRelease string, frames []Frame) ([]Frame, Outcome) {
	if len(s.Callchain) == 0 {
		mod, addr, ok := sp.lookup(s.Pid, s.IP, s.Time)
		if !ok {
			return frames, Failed
		}
		return append(frames, Frame{Mod: mod, Addr: addr}), Complete
	}
	frames = sp.kernelFrames(s, osRelease, frames)
	out := Failed
	if !hasUser(s.Callchain) {
		out = Complete // a kernel thread
	}
	n := sp.near(s.Pid, s.Time)
	chainPCs(s.Callchain, perfevent.ContextUser, func(pc uint64, first bool) bool {
		mod, addr, ok := n.lookup(pc)
		if !ok {
			return false
		}
		frames = append(frames, Frame{Mod: mod, Addr: addr})
		if unwind.EndsPath(mod.Unw, addr, first) {
			out = Complete
			return false
		}
		return true
	})
	return frames, out
}

// kernelFrames appends the frames of a callchain's kernel part.
func (sp *space) kernelFrames(s *sample.Sample, osRelease string, frames []Frame) []Frame {
	var k *Module // found (under a lock) once per sample, not per frame
	chainPCs(s.Callchain, perfevent.ContextKernel, func(pc uint64, _ bool) bool {
		if k == nil {
			k = sp.kernelModule(osRelease)
		}
		frames = append(frames, Frame{Mod: k, Addr: pc})
		return true
	})
	return frames
}

// chainPCs calls f, innermost first, with the addresses of a callchain's
// parts of context ctx (user or kernel), until f returns false. Return
// addresses (all but each part's first entry) are given at the call, one
// byte before; first marks a part's first entry.
func chainPCs(chain []uint64, ctx uint64, f func(pc uint64, first bool) bool) {
	in, first := false, true
	for _, ip := range chain {
		if perfevent.IsContext(ip) {
			in, first = ip == ctx, true
			continue
		}
		if !in {
			continue
		}
		pc := ip
		if !first {
			pc--
		}
		if !f(pc, first) {
			return
		}
		first = false
	}
}

func hasUser(chain []uint64) bool {
	for _, ip := range chain {
		if ip == perfevent.ContextUser {
			return true
		}
	}
	return false
}

// kernelProc is the procedure scope of a kernel frame: its kallsyms
// symbol, else [kernel]@address.
func (p *Profile) kernelProc(m *Module, addr uint64) *Elem {
	name, start, ok := m.kernel.lookup(addr)
	if !ok {
		start, name = addr, fmt.Sprintf("[kernel]@%#x", addr)
	}
	return p.elem(elemKey{mod: m, kind: ElemProc, addr: start, file: "kernel"}, func() *Elem {
		return &Elem{Kind: ElemProc, Name: name, Module: m.Name}
	})
}
