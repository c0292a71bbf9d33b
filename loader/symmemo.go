package loader

import (
	"encoding/binary"
	"fmt"

	"bloop/internal/varint"
	"bloop/structure"
)

// Memo keeps what Open reads from an image's symbol tables and .eh_frame
// between runs (bloop report's cache, keyed by the image, its debug file
// and this build of bloop). Reading them took a warm report 13 to 24 ms
// of CPU for the libraries of a C++ program (libstdc++ 5 to 9 ms: its
// symbols' names, a map of them by address, the .eh_frame walk), where
// the stored tables decode in well under a millisecond.
type Memo interface {
	// Get returns the bytes stored under kind, or nil.
	Get(kind string) []byte
	// Put stores b under kind; a failure only costs the next run the work.
	Put(kind string, b []byte)
}

// symbolsKind is the kind of the stored tables; bump it when what is
// read from the symbols and .eh_frame, or its encoding, changes. The
// PLT stubs' names depend on Options.DyninstPLTNames.
func symbolsKind(opt Options) string {
	return fmt.Sprintf("loader symbols 1 dyninst-plt=%v", opt.DyninstPLTNames)
}

// symbols are what Open's reading of the symbols and .eh_frame gives:
// the Image fields it sets and the corruption it found.
type symbols struct {
	funcs     []*Func
	toc       uint64
	callSites []CallSite
	frames    []structure.Range
	initFuncs []uint64
	glink     uint64
	bad       tally
}

func (s *symbols) setIn(img *Image) {
	img.Funcs, img.TOC, img.CallSites, img.Frames, img.InitFuncs, img.Glink = s.funcs, s.toc, s.callSites, s.frames, s.initFuncs, s.glink
}

// symbolsMemo is the memo the symbols' tables are kept in, nil for none:
// not with DyninstStubs, whose ppc64 stubs need the raw tables.
func symbolsMemo(opt Options) Memo {
	if opt.DyninstStubs {
		return nil
	}
	return opt.Memo
}

// symbolsFromMemo sets the fields the reading of the symbols would,
// from the stored tables, and bad to their corruption; false when there
// are none (or damaged ones: then they are read).
func (img *Image) symbolsFromMemo(opt Options, bad *tally) bool {
	memo := symbolsMemo(opt)
	if memo == nil {
		return false
	}
	b := memo.Get(symbolsKind(opt))
	if b == nil {
		return false
	}
	s, err := decodeSymbols(b)
	if err != nil {
		return false
	}
	s.setIn(img)
	*bad = s.bad
	return true
}

// keepSymbols stores what was read from the symbols in opt.Memo.
func (img *Image) keepSymbols(opt Options, bad tally) {
	memo := symbolsMemo(opt)
	if memo == nil {
		return
	}
	memo.Put(symbolsKind(opt), encodeSymbols(&symbols{funcs: img.Funcs, toc: img.TOC, callSites: img.CallSites,
		frames: img.Frames, initFuncs: img.InitFuncs, glink: img.Glink, bad: bad}))
}

const symbolsMagic = "bloop loader symbols 1\n"

// encodeSymbols: the strings (names, and the corruption's words), then
// TOC and Glink, the procedures (address as the gap from the previous,
// end from the address, flags, local entry, name and aliases by string
// number), the call sites, frames and init functions, and the corruption.
func encodeSymbols(s *symbols) []byte {
	var strs varint.Strings
	ref := strs.Ref
	var body []byte
	u := func(v uint64) { body = binary.AppendUvarint(body, v) }
	u(s.toc)
	u(s.glink)
	total := 0
	for _, fn := range s.funcs {
		total += len(fn.Aliases)
	}
	u(uint64(total))
	u(uint64(len(s.funcs)))
	prev := uint64(0)
	for _, fn := range s.funcs {
		u(fn.Addr - prev)
		prev = fn.Addr
		body = binary.AppendVarint(body, int64(fn.End-fn.Addr))
		flags := uint64(0)
		if fn.PLT {
			flags |= 1
		}
		if fn.Sized {
			flags |= 2
		}
		if fn.Found {
			flags |= 4
		}
		u(flags)
		u(fn.LocalEntry)
		u(fn.Within)
		u(ref(fn.Name))
		u(uint64(len(fn.Aliases)))
		for _, a := range fn.Aliases {
			u(ref(a))
		}
	}
	u(uint64(len(s.callSites)))
	for _, c := range s.callSites {
		u(c.Lo)
		u(c.Hi)
		u(c.Pad)
	}
	u(uint64(len(s.frames)))
	for _, r := range s.frames {
		u(r.Lo)
		u(r.Hi)
	}
	u(uint64(len(s.initFuncs)))
	for _, a := range s.initFuncs {
		u(a)
	}
	u(uint64(len(s.bad)))
	for _, c := range s.bad {
		u(ref(c.Kind))
		u(ref(c.Section))
		u(ref(c.File))
		u(c.Offset)
		u(uint64(c.Count))
	}
	b := binary.AppendUvarint([]byte(symbolsMagic), uint64(len(strs.List)))
	for _, x := range strs.List {
		b = append(binary.AppendUvarint(b, uint64(len(x))), x...)
	}
	return append(b, body...)
}

// decodeSymbols reads stored tables; an error when they are damaged.
// The names are parts of one string, the procedures of one array, the
// aliases of one slice.
func decodeSymbols(b []byte) (*symbols, error) {
	if len(b) < len(symbolsMagic) || string(b[:len(symbolsMagic)]) != symbolsMagic {
		return nil, fmt.Errorf("not stored symbols")
	}
	rest := b[len(symbolsMagic):]
	all := string(rest)
	r := &varint.Reader{B: rest}
	table := make([]string, r.Count())
	for i := range table {
		x := r.Bytes()
		off := len(rest) - len(r.B) - len(x)
		table[i] = all[off : off+len(x)]
	}
	str := func() string {
		i, ok := r.Ref(len(table))
		if !ok {
			return ""
		}
		return table[i]
	}
	s := &symbols{toc: r.Uint(), glink: r.Uint()}
	aliases := make([]string, 0, r.Count())
	n := r.Count()
	fns := make([]Func, n)
	s.funcs = make([]*Func, n)
	addr := uint64(0)
	for i := range fns {
		fn := &fns[i]
		addr += r.Uint()
		if i > 0 && addr <= fns[i-1].Addr {
			r.Fail("procedures out of order")
		}
		fn.Addr = addr
		fn.End = addr + uint64(r.Int())
		flags := r.Uint()
		if flags > 7 {
			r.Fail("procedure flags %#x", flags)
		}
		fn.PLT, fn.Sized, fn.Found = flags&1 != 0, flags&2 != 0, flags&4 != 0
		fn.LocalEntry = r.Uint()
		fn.Within = r.Uint()
		fn.Name = str()
		k := r.Count()
		start := len(aliases)
		for range k {
			aliases = append(aliases, str())
		}
		if k > 0 {
			// Its capacity its length: an append to one procedure's
			// aliases must not write over the next one's.
			fn.Aliases = aliases[start:len(aliases):len(aliases)]
		}
		s.funcs[i] = fn
	}
	if c := r.Count(); c > 0 {
		s.callSites = make([]CallSite, c)
		for i := range s.callSites {
			s.callSites[i] = CallSite{Lo: r.Uint(), Hi: r.Uint(), Pad: r.Uint()}
		}
	}
	if c := r.Count(); c > 0 {
		s.frames = make([]structure.Range, c)
		for i := range s.frames {
			s.frames[i] = structure.Range{Lo: r.Uint(), Hi: r.Uint()}
		}
	}
	if c := r.Count(); c > 0 {
		s.initFuncs = make([]uint64, c)
		for i := range s.initFuncs {
			s.initFuncs[i] = r.Uint()
		}
	}
	for range r.Count() {
		c := Corruption{Kind: str(), Section: str(), File: str(), Offset: r.Uint(), Count: int(r.Uint())}
		s.bad = append(s.bad, c)
	}
	if err := r.End(); err != nil {
		return nil, fmt.Errorf("stored symbols: %w", err)
	}
	return s, nil
}
