package profile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"

	"bloop/isa"
	"bloop/sample"
	"bloop/unwind"
)

// Frame is one frame of an unwound sample: the module and the file
// address of the instruction (the PC in the innermost frame, the call
// site, return address minus one, in the others).
type Frame struct {
	Mod  *Module
	Addr uint64
	PC   uint64 // runtime address
}

// Outcome classifies an unwind.
type Outcome uint8

// Unwind outcomes.
const (
	Complete  Outcome = iota // reached the process or thread entry
	Truncated                // needed stack beyond the copy
	Failed                   // an invalid frame (unmapped return address, no recipe and no frame pointer, ...)
)

// maxDepth bounds an unwind (a corrupt stack could otherwise loop).
const maxDepth = 8192

// unwound is the result of unwinding one sample.
type unwound struct {
	frames   []Frame // innermost first
	out      Outcome
	reason   string // why it failed
	fpSteps  int    // steps that used the frame pointer
	stackUse uint64 // bytes above SP the unwind read (the copy it needed)
}

// unwindSample unwinds s with the recipes, falling back to the frame
// pointer where a frame has no recipe.
func (sp *space) unwindSample(s *sample.Sample) unwound {
	var u unwound
	u.frames, u.out, u.reason, u.fpSteps = sp.unwindFrames(s, stackMemory(s, &u.stackUse))
	return u
}

// unwindFrames is unwindSample's walk over the stack copy mem.
func (sp *space) unwindFrames(s *sample.Sample, mem unwind.Memory) (frames []Frame, out Outcome, reason string, fpSteps int) {
	f := unwind.Frame{PC: s.IP, SP: s.SP, BP: s.BP, DI: s.DI, HasDI: s.HasDI, LR: s.LR, HasLR: s.HasLR}
	// interrupted: f.PC is an instruction that was about to run (the
	// sampled one, or one a signal interrupted), not a return address.
	interrupted := true
	for depth := 0; depth < maxDepth; depth++ {
		pc := f.PC
		signal := !interrupted && sp.sigreturnAt(s, pc)
		if !interrupted && !signal {
			pc-- // the call instruction, not the one after it
		}
		mod, addr, ok := sp.lookup(s.Pid, pc, s.Time)
		if !ok {
			if depth == 0 {
				return frames, Failed, "pc outside any mapped module (JIT or anonymous code)", fpSteps
			}
			return frames, Failed, "return address outside any mapped module", fpSteps
		}
		frames = append(frames, Frame{Mod: mod, Addr: addr, PC: pc})
		if endsPath(mod, addr, depth == 0) {
			return frames, Complete, "", fpSteps
		}
		var next unwind.Frame
		var err error
		interrupted = signal
		if signal {
			// A handler returned here: the caller is the frame the
			// signal interrupted, saved by the kernel.
			next, err = unwind.SignalFrame(f.SP, mem)
		} else if r, ok := recipeAt(mod, addr); ok {
			next, err = r.Step(f, mem)
		} else {
			// No recipe (no code, or a frame the scan cannot follow, such
			// as the dynamic linker's realigned trampoline): the frame
			// pointer if it leads to a return address, else the first
			// word above SP that is one.
			fpSteps++
			callee := procStart(mod, addr)
			next, err = fpStep(mod, f, mem)
			if err != nil || !sp.returnAddress(s, next.PC, mod, callee) {
				next, err = sp.scanStep(s, f, mem, mod, callee)
			}
		}
		switch {
		case errors.Is(err, unwind.ErrTruncated) && nearStack(s, f):
			return frames, Truncated, "", fpSteps
		case errors.Is(err, unwind.ErrTruncated):
			return frames, Failed, "frame far outside the stack", fpSteps
		case err != nil:
			return frames, Failed, err.Error(), fpSteps
		case next.PC == 0 && nullChain(mod, next, mem):
			// ppc64's _start jumps to __libc_start_main with LR 0 and a
			// null back chain: that frame is the outermost.
			return frames, Complete, "", fpSteps
		case next.PC == 0:
			return frames, Failed, "return address 0 before an entry point", fpSteps
		}
		f = next
	}
	return frames, Failed, "too deep", fpSteps
}

// fpUnwind unwinds s by frame pointers only (what a profiler without
// binary analysis does), for comparison.
func (sp *space) fpUnwind(s *sample.Sample) Outcome {
	mem := stackMemory(s, nil)
	f := unwind.Frame{PC: s.IP, SP: s.SP, BP: s.BP}
	first, addr, ok := sp.lookup(s.Pid, f.PC, s.Time) // the sampled module: its instruction set's frame chain
	if ok && isEntry(first, addr) {
		return Complete
	}
	for depth := 0; depth < maxDepth; depth++ {
		next, err := fpStep(first, f, mem)
		switch {
		case errors.Is(err, unwind.ErrTruncated) && nearStack(s, f) && f.BP-f.SP < maxStackSpan:
			return Truncated
		case err == nil && next.PC == 0 && nullChain(first, next, mem):
			return Complete // ppc64's outermost frame, as in unwindFrames
		case err != nil || next.PC == 0:
			return Failed
		}
		mod, addr, ok := sp.lookup(s.Pid, next.PC-1, s.Time)
		if !ok {
			return Failed
		}
		if isRoot(mod, addr) {
			return Complete
		}
		f = next
	}
	return Failed
}

// scanLimit bounds the stack scan of a frame without recipe (bytes): the
// dynamic linker's lazy-binding trampoline saves the vector registers
// (xsave: about 3 KB with AVX-512, more with AMX) below its return address.
const scanLimit = 16384

// scanStep finds the return address of a frame without recipe by
// scanning the stack upward for a word that points just after a call.
func (sp *space) scanStep(s *sample.Sample, f unwind.Frame, mem unwind.Memory, mod *Module, callee uint64) (unwind.Frame, error) {
	for a := f.SP; a < f.SP+scanLimit; a += 8 {
		w, ok := mem(a)
		if !ok {
			if copyFull(s) {
				return unwind.Frame{}, unwind.ErrTruncated
			}
			break
		}
		if cand := (unwind.Frame{PC: w, SP: a + 8, BP: f.BP}); sp.returnAddress(s, w, mod, callee) && sp.leadsOn(s, cand, mem) {
			return cand, nil
		}
	}
	return unwind.Frame{}, errors.New("no recipe and no return address found on the stack")
}

// leadsOn reports whether unwinding by recipes from a candidate caller
// frame reaches an entry point, or goes on for a while with plausible
// return addresses: a stale return address found by the scan soon leads
// to garbage.
func (sp *space) leadsOn(s *sample.Sample, f unwind.Frame, mem unwind.Memory) bool {
	for depth := 0; depth < 16; depth++ {
		mod, addr, ok := sp.lookup(s.Pid, f.PC-1, s.Time)
		if !ok {
			return false
		}
		if isRoot(mod, addr) {
			return true
		}
		r, ok := recipeAt(mod, addr)
		if !ok {
			return depth > 0 // another frame without recipe: give it the benefit of the doubt
		}
		next, err := r.Step(f, mem)
		if errors.Is(err, unwind.ErrTruncated) {
			return true // cannot be disproved within the copy
		}
		if err != nil || !sp.returnAddress(s, next.PC, mod, procStart(mod, addr)) {
			return false
		}
		f = next
	}
	return true
}

// returnAddress reports whether w is a plausible return address into the
// frame of procedure callee (file address in module cm), as the paper
// certifies unwinds: w follows a call instruction in a mapped module, and
// a direct call goes to callee or to a PLT stub (which may reach it);
// an indirect call cannot be checked and is accepted.
func (sp *space) returnAddress(s *sample.Sample, w uint64, cm *Module, callee uint64) bool {
	mod, addr, ok := sp.lookup(s.Pid, w, s.Time)
	if !ok || mod.Img == nil || addr < 8 || !mod.Img.IsCode(addr-1) {
		return false
	}
	ar := isa.For(mod.Img.Machine)
	if ar == nil {
		return false
	}
	call, ok := isa.CallBefore(ar, mod.Img, addr)
	if !ok {
		return false
	}
	if call.Kind == isa.IndirectCall {
		return true
	}
	t := w + call.Target - addr // the target's run-time address
	tm, ta, ok := sp.lookup(s.Pid, t, s.Time)
	if !ok || tm.Img == nil {
		return false
	}
	if ge, ok := ar.(isa.GlobalEntries); ok {
		ta = ge.GlobalEntry(tm.Img, ta) // a ppc64 call enters past the TOC setup
	}
	if tm == cm && ta == callee {
		return true
	}
	if fn := tm.Img.FuncAt(ta); fn != nil && fn.PLT && fn.Addr == ta {
		return true // a PLT stub in the code (ppc64's)
	}
	sec := tm.Img.SectionAt(ta)
	return sec != nil && strings.HasPrefix(sec.Name, ".plt")
}

// procStart is the file address of the procedure holding addr.
func procStart(m *Module, addr uint64) uint64 {
	if m.Unw != nil {
		if i := m.Unw.ProcAt(addr); i >= 0 {
			return m.Unw.Procs()[i].Lo
		}
	}
	return addr
}

func recipeAt(m *Module, addr uint64) (unwind.Recipe, bool) {
	if m.Unw == nil {
		return unwind.Recipe{}, false
	}
	return m.Unw.RecipeAt(addr)
}

// sigreturnAt reports whether the return address pc is the signal
// return trampoline.
func (sp *space) sigreturnAt(s *sample.Sample, pc uint64) bool {
	mod, addr, ok := sp.lookup(s.Pid, pc, s.Time)
	return ok && mod.Img != nil && unwind.IsSigreturn(mod.Img.Bytes(addr, addr+unwind.SigreturnLen))
}

// fpStep follows the frame-pointer chain: [BP] is the caller's BP, [BP+8]
// the return address (x86-64, and aarch64's frame records); on ppc64,
// whose ABI has no frame pointer, the back chain: [SP] is the caller's
// SP, the return address is in its LR save word at +16.
func fpStep(m *Module, f unwind.Frame, mem unwind.Memory) (unwind.Frame, error) {
	if backChain(m) {
		return unwind.BackChainStep(f, mem)
	}
	if f.BP < f.SP {
		return unwind.Frame{}, unwind.ErrBadFrame
	}
	r := unwind.Recipe{CFA: unwind.RegBP, CFAOff: 16, RAOff: -8, BPSaved: true, BPOff: -16}
	return r.Step(f, mem)
}

// nullChain reports whether the caller's frame next, under m's ABI, holds
// the null back chain that marks the outermost frame.
func nullChain(m *Module, next unwind.Frame, mem unwind.Memory) bool {
	if !backChain(m) {
		return false
	}
	w, ok := mem(next.SP)
	return ok && w == 0
}

// backChain reports whether m's frames are chained by the back chain
// (ppc64's ABI) rather than by frame pointers; m may be nil (a PC in no
// module).
func backChain(m *Module) bool {
	return m != nil && m.Unw != nil && m.Unw.ABI().BackChain
}

// maxStackSpan is how far above the sampled SP a frame may plausibly lie
// (a default thread stack).
const maxStackSpan = 8 << 20

// nearStack reports whether frame f lies within a plausible distance of the
// sample's stack: a read beyond the copy there means the copy was too
// short (its size limit, or stack pages the kernel could not read at the
// sample, such as untouched pages of a huge frame), not a bad unwind.
func nearStack(s *sample.Sample, f unwind.Frame) bool { return f.SP-s.SP < maxStackSpan }

// copyFull reports whether the stack copy was cut at its size limit.
func copyFull(s *sample.Sample) bool { return len(s.Stack) >= int(s.StackSize) }

// stackMemory reads the sample's stack copy, which starts at SP. If used
// is not nil it keeps the most bytes above SP a successful read reached:
// a copy of that size gives the same unwind, which is how the recorder's
// default copy size was chosen.
func stackMemory(s *sample.Sample, used *uint64) unwind.Memory {
	base, st := s.SP, s.Stack
	return func(a uint64) (uint64, bool) {
		if a < base || a-base+8 > uint64(len(st)) {
			return 0, false
		}
		if used != nil {
			*used = max(*used, a-base+8)
		}
		return binary.LittleEndian.Uint64(st[a-base:]), true
	}
}

// rootNames are the procedures where threads start.
var rootNames = map[string]bool{"clone": true, "__clone": true, "clone3": true, "__clone3": true, "thread_start": true}

// isEntry reports whether addr lies in the procedure holding the ELF
// entry point of its module (_start of the program or of ld.so).
func isEntry(m *Module, addr uint64) bool {
	if m.Unw == nil || m.Unw.Entry == 0 || m.Img.Shared && !strings.HasPrefix(m.Name, "ld-") {
		return false
	}
	i, j := m.Unw.ProcAt(addr), m.Unw.ProcAt(m.Unw.Entry)
	return i >= 0 && i == j
}

// endsPath reports whether the frame at addr is an outermost one: for the
// sampled instruction, in the entry procedure or in a thread's last steps
// before its function; for a call site, a root. The recipe walk and the
// kernel's callchains (perf -g) share it.
func endsPath(m *Module, addr uint64, sampled bool) bool {
	if sampled {
		return isEntry(m, addr) || aboutToStart(m, addr)
	}
	return isRoot(m, addr)
}

// aboutToStart reports whether the sampled instruction at addr is in the
// outermost frame's last steps: the frame pointer already cleared, the
// indirect call to the thread's (or program's) function at most two
// instructions on (clone3's xor ebp,ebp; and rsp,-16; mov rdi,r8;
// call *rdx). Nothing calls such a frame.
func aboutToStart(m *Module, addr uint64) bool {
	if m.Img == nil || addr < 48 {
		return false
	}
	ar := isa.For(m.Img.Machine)
	fr, ok := ar.(isa.Framer)
	if !ok {
		return false
	}
	if clearFP := fr.ClearFP(); len(clearFP) == 0 || !bytes.Contains(m.Img.Bytes(addr-48, addr), clearFP) {
		return false
	}
	for a, i := addr, 0; i < 3; i++ {
		in := ar.Decode(m.Img.Bytes(a, a+uint64(ar.MaxLen())), a)
		if in.Len <= 0 {
			return false
		}
		if in.Kind == isa.IndirectCall {
			return isRoot(m, in.End()-1)
		}
		if !in.Kind.FallsThrough() {
			return false
		}
		a = in.End()
	}
	return false
}

// isRoot reports whether a call site is in an outermost frame: the
// program's or dynamic loader's entry, a thread-start procedure, or code
// that clears rbp just before an indirect call, the ABI's mark of the
// outermost frame (glibc's clone and clone3 do this; it finds them in a
// stripped libc too).
func isRoot(m *Module, addr uint64) bool {
	if m.Img == nil {
		return false
	}
	if isEntry(m, addr) {
		return true
	}
	if f := m.Img.FuncAt(addr); f != nil {
		for _, n := range f.Aliases {
			if rootNames[n] {
				return true
			}
		}
	}
	// An indirect call to a register (x86-64's 2-byte call *%reg, any
	// on the fixed-width sets) ends at addr+1, after code that clears the
	// frame pointer.
	ar := isa.For(m.Img.Machine)
	fr, ok := ar.(isa.Framer)
	if !ok || addr < 48 {
		return false
	}
	clearFP := fr.ClearFP()
	if len(clearFP) == 0 {
		return false
	}
	if call, ok := isa.CallBefore(ar, m.Img, addr+1); !ok || call.Kind != isa.IndirectCall || call.Len != 2 && ar.Align() == 1 {
		return false
	}
	return bytes.Contains(m.Img.Bytes(addr-48, addr), clearFP)
}
