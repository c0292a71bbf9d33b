package unwind

import (
	"encoding/binary"
	"errors"
	"strings"

	"bloop/isa"
)

// The walk of one sampled stack: recipes where a frame has one, the
// frame pointer or a stack scan (checked as the paper certifies
// unwinds) where it has none, until an entry point. Modules are found
// through a Lookup, so the walk needs nothing of the recording but the
// registers and the stack copy.

// Outcome classifies an unwind.
type Outcome uint8

// Unwind outcomes.
const (
	Complete  Outcome = iota // reached the process or thread entry
	Truncated                // needed stack beyond the copy
	Failed                   // an invalid frame (unmapped return address, no recipe and no frame pointer, ...)
)

// Lookup places a run-time address of the sampled process: the module
// holding it (nil for a mapped file that could not be read) and the file
// address there; ok is false outside every mapping.
type Lookup func(pc uint64) (m *Module, addr uint64, ok bool)

// Stack is what a walk starts from: the sampled registers and the copy
// of the stack from their SP.
type Stack struct {
	Regs Frame
	Copy []byte
	// Limit is the size the copy was asked for: a copy that long may have
	// been cut short of the stack's top.
	Limit int
}

// Walk is the result of unwinding one sample.
type Walk struct {
	// PCs are the frames' run-time addresses, innermost first: the
	// sampled instruction, then call sites (return address minus one)
	// or the instructions a signal interrupted.
	PCs      []uint64
	Out      Outcome
	Reason   string // why it failed
	FPSteps  int    // steps that used the frame pointer
	StackUse uint64 // bytes above SP the unwind read (the copy it needed)
}

// maxDepth bounds an unwind (a corrupt stack could otherwise loop).
const maxDepth = 8192

// Unwind walks st with the recipes, falling back to the frame pointer
// where a frame has no recipe.
func Unwind(st Stack, look Lookup) Walk {
	var w Walk
	w.PCs, w.Out, w.Reason, w.FPSteps = walker{st, look}.frames(st.memory(&w.StackUse))
	return w
}

// walker is one stack's walk: the stack and its process's modules.
type walker struct {
	st   Stack
	look Lookup
}

// frames is Unwind's walk over the stack copy mem.
func (sp walker) frames(mem Memory) (frames []uint64, out Outcome, reason string, fpSteps int) {
	f := sp.st.Regs
	// interrupted: f.PC is an instruction that was about to run (the
	// sampled one, or one a signal interrupted), not a return address.
	interrupted := true
	for depth := 0; depth < maxDepth; depth++ {
		pc := f.PC
		signal := !interrupted && sp.sigreturnAt(pc)
		if !interrupted && !signal {
			pc-- // the call instruction, not the one after it
		}
		mod, addr, ok := sp.look(pc)
		if !ok {
			if depth == 0 {
				return frames, Failed, "pc outside any mapped module (JIT or anonymous code)", fpSteps
			}
			return frames, Failed, "return address outside any mapped module", fpSteps
		}
		frames = append(frames, pc)
		if EndsPath(mod, addr, depth == 0) {
			return frames, Complete, "", fpSteps
		}
		var next Frame
		var err error
		interrupted = signal
		if signal {
			// A handler returned here: the caller is the frame the
			// signal interrupted, saved by the kernel.
			next, err = SignalFrame(f.SP, mem)
		} else if r, ok := recipeAt(mod, addr); ok {
			next, err = r.Step(f, mem)
			if sp.broken(next, err) {
				// A recipe that leads nowhere (a frame the analysis got
				// wrong) would end the walk: the frame pointer or the
				// scan may still find the caller, checked as below.
				if alt, aerr := sp.noRecipeStep(f, mem, mod, addr); aerr == nil {
					next, err = alt, nil
					fpSteps++
				}
			}
		} else {
			// No recipe (no code, or a frame the scan cannot follow, such
			// as the dynamic linker's realigned trampoline).
			fpSteps++
			next, err = sp.noRecipeStep(f, mem, mod, addr)
		}
		switch {
		case errors.Is(err, ErrTruncated) && sp.st.nearStack(f):
			return frames, Truncated, "", fpSteps
		case errors.Is(err, ErrTruncated):
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

// noRecipeStep unwinds a frame without a usable recipe: the frame pointer
// if it leads to a return address, else the first word above SP that is
// one.
func (sp walker) noRecipeStep(f Frame, mem Memory, mod *Module, addr uint64) (Frame, error) {
	callee := procStart(mod, addr)
	next, err := fpStep(mod, f, mem)
	if err != nil || !sp.returnAddress(next.PC, mod, callee) {
		next, err = sp.scanStep(f, mem, mod, callee)
	}
	return next, err
}

// broken reports whether a recipe's step cannot be right: the caller's
// frame below the callee's, or a return address in no mapped module.
func (sp walker) broken(next Frame, err error) bool {
	if errors.Is(err, ErrBadFrame) {
		return true
	}
	if err != nil || next.PC == 0 {
		return false // a copy too short, or ppc64's outermost frame
	}
	_, _, ok := sp.look(next.PC - 1)
	return !ok
}

// UnwindFP walks st by frame pointers only (what a profiler without
// binary analysis does), for comparison.
func UnwindFP(st Stack, look Lookup) Outcome {
	sp := walker{st, look}
	mem := st.memory(nil)
	f := Frame{PC: st.Regs.PC, SP: st.Regs.SP, BP: st.Regs.BP}
	first, addr, ok := sp.look(f.PC) // the sampled module: its instruction set's frame chain
	if ok && isEntry(first, addr) {
		return Complete
	}
	for depth := 0; depth < maxDepth; depth++ {
		next, err := fpStep(first, f, mem)
		switch {
		case errors.Is(err, ErrTruncated) && sp.st.nearStack(f) && f.BP-f.SP < maxStackSpan:
			return Truncated
		case err == nil && next.PC == 0 && nullChain(first, next, mem):
			return Complete // ppc64's outermost frame, as in frames
		case err != nil || next.PC == 0:
			return Failed
		}
		mod, addr, ok := sp.look(next.PC - 1)
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
func (sp walker) scanStep(f Frame, mem Memory, mod *Module, callee uint64) (Frame, error) {
	for a := f.SP; a < f.SP+scanLimit; a += 8 {
		w, ok := mem(a)
		if !ok {
			if sp.st.full() {
				return Frame{}, ErrTruncated
			}
			break
		}
		if cand := (Frame{PC: w, SP: a + 8, BP: f.BP}); sp.returnAddress(w, mod, callee) && sp.leadsOn(cand, mem) {
			return cand, nil
		}
	}
	return Frame{}, errors.New("no recipe and no return address found on the stack")
}

// leadsOn reports whether unwinding by recipes from a candidate caller
// frame reaches an entry point, or goes on for a while with plausible
// return addresses: a stale return address found by the scan soon leads
// to garbage.
func (sp walker) leadsOn(f Frame, mem Memory) bool {
	for depth := 0; depth < 16; depth++ {
		mod, addr, ok := sp.look(f.PC - 1)
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
		if errors.Is(err, ErrTruncated) {
			return true // cannot be disproved within the copy
		}
		if err != nil || !sp.returnAddress(next.PC, mod, procStart(mod, addr)) {
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
func (sp walker) returnAddress(w uint64, cm *Module, callee uint64) bool {
	mod, addr, ok := sp.look(w)
	if !ok || mod == nil || addr < 8 || !mod.Img.IsCode(addr-1) {
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
	tm, ta, ok := sp.look(t)
	if !ok || tm == nil {
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
	if m != nil {
		if i := m.ProcAt(addr); i >= 0 {
			return m.Procs()[i].Lo
		}
	}
	return addr
}

func recipeAt(m *Module, addr uint64) (Recipe, bool) {
	if m == nil {
		return Recipe{}, false
	}
	return m.RecipeAt(addr)
}

// sigreturnAt reports whether the return address pc is the signal
// return trampoline.
func (sp walker) sigreturnAt(pc uint64) bool {
	mod, addr, ok := sp.look(pc)
	return ok && mod != nil && IsSigreturn(mod.Img.Bytes(addr, addr+SigreturnLen))
}

// fpStep follows the frame-pointer chain: [BP] is the caller's BP, [BP+8]
// the return address (x86-64, and aarch64's frame records); on ppc64,
// whose ABI has no frame pointer, the back chain: [SP] is the caller's
// SP, the return address is in its LR save word at +16.
func fpStep(m *Module, f Frame, mem Memory) (Frame, error) {
	if backChain(m) {
		return BackChainStep(f, mem)
	}
	if f.BP < f.SP {
		return Frame{}, ErrBadFrame
	}
	r := Recipe{CFA: RegBP, CFAOff: 16, RAOff: -8, BPSaved: true, BPOff: -16}
	return r.Step(f, mem)
}

// nullChain reports whether the caller's frame next, under m's ABI, holds
// the null back chain that marks the outermost frame.
func nullChain(m *Module, next Frame, mem Memory) bool {
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
	return m != nil && m.ABI().BackChain
}

// maxStackSpan is how far above the sampled SP a frame may plausibly lie
// (a default thread stack).
const maxStackSpan = 8 << 20

// nearStack reports whether frame f lies within a plausible distance of the
// sample's stack: a read beyond the copy there means the copy was too
// short (its size limit, or stack pages the kernel could not read at the
// sample, such as untouched pages of a huge frame), not a bad unwind.
func (st Stack) nearStack(f Frame) bool { return f.SP-st.Regs.SP < maxStackSpan }

// full reports whether the stack copy was cut at its size limit.
func (st Stack) full() bool { return len(st.Copy) >= st.Limit }

// memory reads the stack copy, which starts at SP. If used is not nil it
// keeps the most bytes above SP a successful read reached: a copy of that
// size gives the same unwind, which is how the recorder's default copy
// size was chosen.
func (st Stack) memory(used *uint64) Memory {
	base, data := st.Regs.SP, st.Copy
	return func(a uint64) (uint64, bool) {
		if a < base || a-base+8 > uint64(len(data)) {
			return 0, false
		}
		if used != nil {
			*used = max(*used, a-base+8)
		}
		return binary.LittleEndian.Uint64(data[a-base:]), true
	}
}

// rootNames are the procedures where threads start.
var rootNames = map[string]bool{"clone": true, "__clone": true, "clone3": true, "__clone3": true, "thread_start": true}

// isEntry reports whether addr lies in the procedure holding the ELF
// entry point of its module (_start of the program or of ld.so).
func isEntry(m *Module, addr uint64) bool {
	if m == nil || m.Entry == 0 || m.Img.Shared && !strings.HasPrefix(m.Name, "ld-") {
		return false
	}
	// Every sample asks it: the entry procedure's bounds rule out almost
	// every address without a search.
	m.entryOnce.Do(func() { m.entryProc = m.ProcAt(m.Entry) })
	j := m.entryProc
	if j < 0 {
		return false
	}
	if p := m.Procs()[j]; addr < p.Lo || addr >= p.Hi {
		return false
	}
	return m.ProcAt(addr) == j
}

// EndsPath reports whether the frame at addr is an outermost one: for the
// sampled instruction, in the entry procedure or in a thread's last steps
// before its function; for a call site, a root. The recipe walk and the
// kernel's callchains (perf -g) share it.
func EndsPath(m *Module, addr uint64, sampled bool) bool {
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
	if m == nil || addr < 48 {
		return false
	}
	ar := isa.For(m.Img.Machine)
	fr, ok := ar.(isa.Framer)
	if !ok {
		return false
	}
	if clearFP := fr.ClearFP(); len(clearFP) == 0 || !m.clearFPBefore(addr, clearFP) {
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
	if m == nil {
		return false
	}
	// Every sample asks it of each call site on its stack, and a profile's
	// stacks share most of their call sites: the answer is kept.
	if r, ok := m.rootCache.get(addr); ok {
		return r
	}
	r := m.kept(m.roots, addr, func() bool { return findRoot(m, addr) })
	m.rootCache.put(addr, r)
	return r
}

// kept returns the answer for addr kept in answers, finding it once.
func (m *Module) kept(answers map[uint64]bool, addr uint64, find func() bool) bool {
	m.rootMu.RLock()
	r, ok := answers[addr]
	m.rootMu.RUnlock()
	if !ok {
		r = find()
		m.rootMu.Lock()
		answers[addr] = r
		m.rootMu.Unlock()
	}
	return r
}

// findRoot is isRoot's answer, not kept.
func findRoot(m *Module, addr uint64) bool {
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
	// The byte search first: it rules out almost every call site, and
	// decoding backwards for the call costs a dozen decodes per frame.
	if !m.clearFPBefore(addr, clearFP) {
		return false
	}
	call, ok := isa.CallBefore(ar, m.Img, addr+1)
	return ok && call.Kind == isa.IndirectCall && (call.Len == 2 || ar.Align() != 1)
}
