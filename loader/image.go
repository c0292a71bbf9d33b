// Package loader reads an ELF image and the debug information bloop needs:
// executable sections, function symbols and PLT stubs, DWARF procedure
// descriptors with their inline trees, and a filtered, sorted line table.
package loader

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"

	"bloop/internal/mapfile"
	"bloop/structure"
)

// Arch names the instruction set of an image.
type Arch string

// Architectures bloop knows about.
const (
	AMD64   Arch = "amd64"
	PPC64LE Arch = "ppc64le"
	ARM64   Arch = "arm64"
	// CUDA is NVIDIA's GPU code (cubins, ELF machine 190), laid out as hpcstruct
	// lays it out (cubin.go).
	CUDA Arch = "cuda"
)

// Section is an executable section with its bytes.
type Section struct {
	Name string
	Addr uint64
	Data []byte
}

// End is the first address after the section.
func (s *Section) End() uint64 { return s.Addr + uint64(len(s.Data)) }

// IsPLT reports whether the section holds PLT stubs (the stubs are
// procedures of their own; .plt begins with the resolver trampoline).
func (s *Section) IsPLT() bool {
	return s.Name == ".plt" || s.Name == ".plt.sec" || s.Name == ".plt.got"
}

// Image is everything bloop reads from one ELF file (and its separate debug file).
type Image struct {
	Path     string
	Name     string // basename of Path
	Arch     Arch
	Machine  elf.Machine // e_machine: isa.For gives its instruction set
	Shared   bool        // a shared library, not an executable (PIE or not)
	Sections []*Section
	Funcs    []*Func // procedures from symbols and PLT stubs, sorted by Addr
	Procs    []*Subprogram
	// Descriptors are all procedure descriptors, with and without code.
	Descriptors []*Descriptor
	Lines       *LineTable
	DebugFile   string // separate debug file used, or ""
	// BuildID is the file's GNU build-id, nil without one: what a
	// debuginfod is asked for the module's sources by.
	BuildID []byte
	// DebugSource says where DebugFile came from: DebugLocal or
	// DebugDebuginfod; "" without one.
	DebugSource string
	// CallSites map calls to their exception landing pads (from the LSDAs
	// that .eh_frame points to), sorted by address.
	CallSites []CallSite
	// Entry is the ELF entry point (for most shared libraries 0, or not code).
	Entry uint64
	// DyninstExec is Dyninst 12.3's Symtab::isExec(): the file can only be
	// an executable (elfclassify's rule, elfFacts). hpcstruct suffixes
	// procedure names with "[module]" where it is false, which is also the
	// case for a library that can be run, as libc.so.6 (Shared false).
	DyninstExec bool
	// DyninstProgram is Dyninst's Object::isExecutable: ParseAPI starts a
	// function "_start" at Entry when no symbol is there.
	DyninstProgram bool
	// DyninstEntries are, with Options.DyninstStubs, the ppc64 local entry
	// points that calls reach, sorted: Dyninst makes a function of each
	// beside its procedure's.
	DyninstEntries []uint64
	// TOC is ppc64's TOC base, the value of r2 in the module's code
	// (isa.ForTOC), 0 on other machines.
	TOC uint64
	// Frames are the code ranges of .eh_frame's FDEs, sorted by Lo: what
	// the compiler described as one procedure (or one part of a split one).
	Frames []structure.Range
	// InitFuncs are the code addresses held by .preinit_array, .init_array
	// and .fini_array (constructors and destructors), and .dynamic's
	// DT_INIT and DT_FINI (_init, _fini), sorted.
	InitFuncs []uint64
	// Glink is ppc64's DT_PPC64_GLINK, 32 bytes before the first lazy PLT
	// entry (isa.GlinkResolvers); 0 without one and on other machines.
	Glink uint64
	// InstSize is the width of every instruction where the instruction set
	// has one width and no decoder walks the code (CUDA: 8 or 16 bytes by
	// SM architecture), else 0. Statements are made per instruction.
	InstSize uint64
	// SM is a cubin's SM architecture number from e_flags (75 for sm_75),
	// which names the generation of its instruction set; 0 elsewhere.
	SM int
	// IndirectTargets are the targets of a cubin's indirect branches, by
	// the branch's address, as its .nv.info attributes list them.
	IndirectTargets map[uint64][]uint64
	// CallTargets are the callees of a cubin's absolute calls, by the
	// call's address, as its relocations name them.
	CallTargets map[uint64]uint64
	Warnings    []string
	// Corrupt lists the inconsistent data that loading repaired or
	// ignored, by kind (Corruption), sorted: where it is, the structure
	// may be wrong.
	Corrupt []Corruption

	procIndex []procRange
	// lazy is what LoadDWARF reads (Options.LazyDWARF).
	lazy *lazyDWARF
	bad  tally      // corruption in the DWARF (readDWARF, readLinePrograms)
	data []*Section // every allocated PROGBITS section, for jump tables // every range of every procedure, by Lo
}

// Options tunes how an image is opened.
type Options struct {
	DebugDirs []string // extra roots searched for separate debug files
	// Fetcher, when set, is asked for a separate debug file by build-id
	// when none is found on this machine (a debuginfod client).
	Fetcher DebugFetcher
	Workers int // goroutines for sections and compilation units; <= 0: GOMAXPROCS
	// SkipDescriptors leaves Image.Descriptors and Subprogram.Desc empty.
	// Only the thesis engine reads them, and on large C++ images they are
	// a third of loading: every unit declares its headers' members again.
	SkipDescriptors bool
	// RawFileNames spells file names (of line rows, DW_AT_decl_file and
	// DW_AT_call_file) as hpcstruct prints them: Dyninst's spelling
	// (libdw's uncleaned directory entry + "/" + name, and a name still
	// relative after that behind DW_AT_comp_dir and "/"), resolved as
	// realpath(3) does when it is absolute and the file exists here (see
	// realPaths). Without it names are cleaned and relative ones joined
	// with an absolute DW_AT_comp_dir.
	RawFileNames bool
	// DyninstPLTNames names PLT stubs as hpcstruct does where Dyninst
	// reads no name for them (aarch64's .plt: targ<addr>@plt, which also
	// hides that abort@plt does not return). Without it every stub is
	// named by its relocation.
	DyninstPLTNames bool
	// DyninstStubs makes procedures of ppc64's PLT call stubs as Dyninst
	// does (see dyninstStubs): only called stubs, named from the linker's
	// stub symbols, each running to the next procedure.
	DyninstStubs bool
	// DyninstLineSites reads the call site of an inlined call that NVIDIA's
	// line-program extension describes as hpcstruct 2023.08 does: the row
	// after the one the context names when that row is not the call's own
	// code (see seqReader.site). Without it the call site is that row.
	DyninstLineSites bool
	// DyninstDeclNames reads Subprogram.DyninstDeclNames.
	DyninstDeclNames bool
	// Memo, when set, keeps the tables read from the image's symbols and
	// .eh_frame between runs (symmemo.go); not with DyninstStubs.
	Memo Memo
	// MapFiles maps the image's file and its debug file and slices
	// their uncompressed sections from the mappings, never unmapped:
	// for a process that touches few of their bytes (a report reads the
	// code at its samples) and opens few files.
	MapFiles bool
	// LazyDWARF leaves the DWARF (Procs, Lines, Descriptors, and the
	// warnings and corruption it holds) unread until Image.LoadDWARF,
	// which whoever uses them calls first: a report whose modules'
	// scopes are cached needs their symbols, code and frames only.
	LazyDWARF bool
}

// Error is a problem with an input file; it names the file.
type Error struct {
	Path string
	Msg  string
}

func (e *Error) Error() string { return e.Path + ": " + e.Msg }

func errorf(path, format string, args ...any) error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// maxSectionSize bounds what we read of one section, so a corrupt size field
// gives an error instead of an enormous allocation.
const maxSectionSize = 4 << 30

// Open reads path. Every error names the file and the problem.
func Open(path string, opt Options) (img *Image, err error) {
	// debug/elf and debug/dwarf can panic on hostile input; report it as bad input.
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, errorf(path, "malformed ELF or DWARF data (%v)", r)
		}
	}()
	f, st, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := readHeader(path, f, st)
	if err != nil {
		return nil, err
	}
	ef, raw := h.ef, h.raw
	defer ef.Close()
	img = &Image{Path: resolveLinks(path), Entry: ef.Entry, Machine: ef.Machine, Arch: h.arch, Shared: h.shared,
		BuildID: buildID(ef)}
	img.Name = filepath.Base(img.Path)
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if h.cub != nil {
		img.InstSize, img.SM, img.IndirectTargets, img.CallTargets = h.cub.instSize, h.cub.sm, h.cub.indirect, h.cub.calls
		img.Warnings = append(img.Warnings, h.cub.warnings...)
	}
	facts := readELFFacts(ef)
	img.DyninstExec, img.DyninstProgram = facts.onlyExecutable(), facts.program()
	self := fileBytes{ReaderAt: raw, size: uint64(st.Size())}
	if fh, ok := raw.(*os.File); ok && opt.MapFiles {
		// Not a cubin laid out anew: the file's own bytes.
		self.mapped = mapfile.Map(fh, st.Size(), false)
	}
	if err := img.readSections(ef, self); err != nil {
		return nil, err
	}
	dwFile, dwRaw, dbgPath, dbgFrom := ef, self, "", ""
	if !hasDWARF(ef) {
		if p, from := findDebugFile(path, ef, opt); p != "" {
			df, raw, err := openELF(p)
			var fb fileBytes
			if err == nil {
				defer raw.Close()
				fb, err = newFileBytes(raw)
				if err == nil && opt.MapFiles {
					fb.mapped = mapfile.Map(raw, int64(fb.size), false)
				}
			}
			if err != nil {
				img.Warnings = append(img.Warnings, fmt.Sprintf("%s: separate debug file unreadable: %v", p, err))
			} else {
				dwFile, dwRaw, dbgPath, dbgFrom = df, fb, p, from
			}
		}
	}
	img.DebugFile, img.DebugSource = dbgPath, dbgFrom
	var dbgSyms *elf.File
	if dwFile != ef {
		dbgSyms = dwFile
	}
	// Lazily, the DWARF is read by LoadDWARF; a cubin's is laid out
	// anew (h.raw), so it is read now.
	lazy := opt.LazyDWARF && h.cub == nil && hasDWARF(dwFile)
	// Symbols and landing pads are read while the DWARF is: inflating
	// .debug_info is the longest step of loading, and they use neither
	// each other's results nor the fields the DWARF fills.
	symbols := make(chan any)
	var symBad tally // the symbols' and .eh_frame's, apart from the DWARF's: no lock
	go func() {
		defer func() { symbols <- recover() }()
		if img.symbolsFromMemo(opt, &symBad) {
			return
		}
		tabs := img.readFuncs(ef, dbgSyms, opt.DyninstPLTNames, &symBad)
		if opt.DyninstStubs {
			img.dyninstStubs(ef, tabs)
		}
		img.CallSites, img.Frames = readEHFrame(ef, img, &symBad)
		img.InitFuncs = img.initFuncs(ef, self)
		if ef.Machine == elf.EM_PPC64 {
			img.Glink = dynValue(ef, elf.DT_PPC64_GLINK)
		}
		img.keepSymbols(opt, symBad)
	}()
	defer func() {
		if symbols != nil {
			<-symbols // on an early return, let the reader finish with the file
		}
	}()
	if hasDWARF(dwFile) && !lazy {
		img.readDebugInfo(dwFile, dwRaw, debugName(path, dbgPath), opt)
	}
	if x := <-symbols; x != nil {
		symbols = nil
		panic(x) // reported by Open's recover, as bad input
	}
	symbols = nil
	if lazy {
		dwPath := path
		if dbgPath != "" {
			dwPath = dbgPath
		}
		img.lazy = &lazyDWARF{img: img, path: path, file: dwPath, dbgPath: dbgPath, opt: opt, symBad: symBad}
		if dwPath == path {
			img.lazy.size, img.lazy.mtime = st.Size(), st.ModTime()
		} else if dst, err := os.Stat(dwPath); err == nil {
			img.lazy.size, img.lazy.mtime = dst.Size(), dst.ModTime()
		}
		img.finishDebug(dbgPath, symBad)
		return img, nil
	}
	img.finishDebug(dbgPath, symBad)
	collectLoadGarbage(dwFile)
	return img, nil
}

// readDebugInfo reads the DWARF of dwFile (whose bytes are dwRaw, name
// its name in warnings): bad DWARF is common, so a failure is a warning
// and the image keeps its symbols.
func (img *Image) readDebugInfo(dwFile *elf.File, dwRaw fileBytes, name string, opt Options) {
	ds, err := openDWARF(dwFile, dwRaw, opt.Workers)
	if err == nil {
		err = img.readDWARF(ds, opt)
	}
	if err == nil && len(ds.Info) == 0 && len(ds.Line) > 0 {
		err = img.readLinePrograms(ds.Sections, opt)
	}
	if err != nil {
		// Bad DWARF is common: keep symbols and CFG loops, say why lines are missing.
		img.Warnings = append(img.Warnings, fmt.Sprintf("%s: DWARF unreadable, using symbols only: %v", name, err))
	}
}

// finishDebug makes the image's tables once its DWARF (none yet when
// lazy) and symbols are read: the corruption found in both (symBad the
// symbols'), the line table's open rows clipped, the procedures indexed.
func (img *Image) finishDebug(dbgPath string, symBad tally) {
	for i := range img.bad {
		img.bad[i].File = dbgPath
	}
	img.bad.merge(symBad)
	img.Corrupt, img.bad = img.bad.sorted(), nil
	if img.Lines == nil {
		img.Lines = &LineTable{}
	}
	img.Lines.clipOpen(img)
	img.index()
}

// collectLoadGarbage runs the collector once loading of a large DWARF is
// over. Loading leaves the inflated sections as garbage (libjvm: 257 MB of
// .debug_info); a cycle that ran while they were live sets the next heap
// goal at twice that, and the analysis grows the heap to it (libjvm: 1.3
// GB peak instead of 0.85 GB). One cycle now costs far less than it saves.
func collectLoadGarbage(f *elf.File) {
	const large = 64 << 20
	if s := f.Section(".debug_info"); s != nil && s.Size >= large {
		runtime.GC()
	}
}

// resolveLinks is path with its symbolic links resolved, as hpcstruct
// names a module (libgsl.so.27 is libgsl.so.27.0.0 in LM n and in the
// "[libgsl.so.27.0.0]" suffix of procedure names) and as hpcrun records
// it, so hpcprof matches the two. path itself when it cannot be resolved.
func resolveLinks(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}

func debugName(path, dbg string) string {
	if dbg != "" {
		return dbg
	}
	return path
}

// isPIE tells a position-independent executable from a shared library:
// DF_1_PIE when the linker set it, else the presence of an interpreter.
func isPIE(f *elf.File) bool {
	if vals, err := f.DynValue(elf.DT_FLAGS_1); err == nil {
		for _, v := range vals {
			if v&uint64(elf.DF_1_PIE) != 0 {
				return true
			}
		}
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return true
		}
	}
	return false
}

func hasDWARF(f *elf.File) bool {
	for _, s := range f.Sections {
		switch s.Name {
		case ".debug_info", ".zdebug_info", ".debug_line", ".zdebug_line":
			if s.Type != elf.SHT_NOBITS {
				return true
			}
		}
	}
	return false
}

// openELF opens a separate debug file, keeping the file for raw reads.
func openELF(path string) (*elf.File, *os.File, error) {
	raw, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := elf.NewFile(raw)
	if err != nil {
		raw.Close()
		return nil, nil, err
	}
	return f, raw, nil
}

func (img *Image) readSections(f *elf.File, raw fileBytes) error {
	for _, s := range f.Sections {
		// .eh_frame is SHT_X86_64_UNWIND on x86-64; kept for landing pads.
		if !loaded(s) {
			continue
		}
		if s.Size > maxSectionSize {
			return errorf(img.Path, "section %s claims %d bytes", s.Name, s.Size)
		}
		if s.Addr+s.Size < s.Addr {
			return errorf(img.Path, "section %s at %#x runs past the end of the address space", s.Name, s.Addr)
		}
		data, err := sectionBytes(raw, s)
		if err != nil {
			return errorf(img.Path, "%v", err)
		}
		if uint64(len(data)) != s.Size {
			return errorf(img.Path, "section %s truncated (%d of %d bytes)", s.Name, len(data), s.Size)
		}
		sec := &Section{Name: s.Name, Addr: s.Addr, Data: data}
		img.data = append(img.data, sec)
		if s.Flags&elf.SHF_EXECINSTR != 0 {
			img.Sections = append(img.Sections, sec)
		}
	}
	sort.Slice(img.Sections, func(i, j int) bool { return img.Sections[i].Addr < img.Sections[j].Addr })
	sort.Slice(img.data, func(i, j int) bool { return img.data[i].Addr < img.data[j].Addr })
	return nil
}

// SectionAt returns the executable section holding addr, or nil.
func (img *Image) SectionAt(addr uint64) *Section {
	i := sort.Search(len(img.Sections), func(i int) bool { return img.Sections[i].End() > addr })
	if i < len(img.Sections) && img.Sections[i].Addr <= addr {
		return img.Sections[i]
	}
	return nil
}

// Bytes returns the code bytes in [lo, hi), clipped to lo's section.
func (img *Image) Bytes(lo, hi uint64) []byte {
	s := img.SectionAt(lo)
	if s == nil {
		return nil
	}
	if hi > s.End() || hi < lo { // hi < lo: lo+n wrapped around
		hi = s.End()
	}
	return s.Data[lo-s.Addr : hi-s.Addr]
}

// ReadData returns n bytes at addr from any allocated section (code or
// read-only data), or nil when they are not all in one section.
func (img *Image) ReadData(addr uint64, n int) []byte {
	i := sort.Search(len(img.data), func(i int) bool { return img.data[i].End() > addr })
	// n > End-addr rather than addr+n > End: an address computed from
	// hostile code can lie at the top of the address space, where addr+n
	// wraps around.
	if i == len(img.data) || img.data[i].Addr > addr || n < 0 || uint64(n) > img.data[i].End()-addr {
		return nil
	}
	off := addr - img.data[i].Addr
	return img.data[i].Data[off : off+uint64(n)]
}

// dataFrom returns the bytes from addr to the end of its allocated section.
func (img *Image) dataFrom(addr uint64) []byte {
	i := sort.Search(len(img.data), func(i int) bool { return img.data[i].End() > addr })
	if i == len(img.data) || img.data[i].Addr > addr {
		return nil
	}
	return img.data[i].Data[addr-img.data[i].Addr:]
}

// IsCode reports whether addr lies in an executable section.
func (img *Image) IsCode(addr uint64) bool { return img.SectionAt(addr) != nil }

// HasInlineInfo reports whether any procedure has DWARF inline records.
func (img *Image) HasInlineInfo() bool {
	for _, p := range img.Procs {
		if len(p.Inlines) > 0 {
			return true
		}
	}
	return false
}

// FromSections builds an image from raw sections, for analysing code that
// does not come from a file (and for tests). Sections holding code must
// be marked exec.
func FromSections(arch Arch, exec, data []*Section) *Image {
	img := &Image{Name: "memory", Arch: arch, Machine: machineOf(arch), Lines: &LineTable{}}
	img.Sections = append(img.Sections, exec...)
	img.data = append(append(img.data, exec...), data...)
	sort.Slice(img.Sections, func(i, j int) bool { return img.Sections[i].Addr < img.Sections[j].Addr })
	sort.Slice(img.data, func(i, j int) bool { return img.data[i].Addr < img.data[j].Addr })
	return img
}
