package scopes

import (
	"fmt"
	"strings"

	"github.com/ianlancetaylor/demangle"

	"bloop/loader"
	"bloop/structure"
)

// BuildProc places one procedure's code into a P scope with the DWARF-inline
// engine and returns it with the name of the file it belongs to.
func BuildProc(in Input) (*structure.Scope, string) {
	b := &builder{in: in, names: in.Names.inlineName}
	var rank map[string]int
	if in.Hpcstruct {
		b.beyond = in.Img.Lines.Beyond(in.Sub)
		rank = b.fileRanks()
	}
	root := b.tree()
	p, file, cfile := ProcHeader(in)
	p.Children = emit(root, context{file: cfile, threshold: p.Line, rank: rank, hpcstruct: in.Hpcstruct})
	return p, file
}

// ProcHeader makes the P scope of a procedure (names, line, entry) without
// children, and says which file it belongs to and which file its own code
// is judged against.
func ProcHeader(in Input) (p *structure.Scope, file, cfile string) {
	p = &structure.Scope{Kind: structure.Proc, Entry: in.Func.Addr}
	p.Name, p.LinkName = in.Names.procName(in.Img, in.Func, in.Sub)
	p.Line, file = procLine(in)
	return p, file, file
}

// ProcFile is the file a procedure is written under (hpcstruct's with
// in.Hpcstruct): known before its code is analysed, so procedures can be
// streamed in output order. It reads in's Img, Func, Sub and Hpcstruct.
func ProcFile(in Input) string {
	_, file := procLine(in)
	return file
}

// procLine is a procedure's line and file. The procedure belongs to the
// file of its entry's line (which differs from the declaring file when the
// entry is inlined code); foreign code is judged against it too. A line-0
// row names no file, but for hpcstruct (in.Hpcstruct), whose line map keeps a
// row's file whatever its line: clang -g1 gives transform's entry in
// licm-clang14-O2g1 line 0 of licm.c, and no DWARF procedure says more,
// so hpcstruct files it under licm.c, not under the binary. Where
// instructions have one width (cubins) the line is hpcstruct's scan of
// the first instructions instead (scanProcLine).
func procLine(in Input) (line int, file string) {
	img, fn, sub, hpcstruct := in.Img, in.Func, in.Sub, in.Hpcstruct
	if img.InstSize > 0 {
		line, file = scanProcLine(img, fn)
	} else if r, ok := img.Lines.Lookup(fn.Addr); ok {
		line = r.Line
		if r.Line != 0 || hpcstruct {
			file = r.File
		}
	} else if hpcstruct {
		if r, ok := probeProcLine(img.Lines, fn.Addr, fn.End); ok {
			line, file = r.Line, r.File
		}
	}
	if line == 0 && !hpcstruct && sub != nil && sub.DeclLine > 0 && (file == "" || file == sub.DeclFile) {
		// The entry's row says line 0 (clang's AMD GPU kernels at -O2:
		// the declaration's row and a line-0 row at the same address, the
		// second winning): the DWARF declaration is what the binary says
		// of the procedure's line. hpcstruct writes 0.
		line, file = sub.DeclLine, sub.DeclFile
	}
	if file == "" && sub != nil {
		file = sub.DeclFile
	}
	if file == "" {
		file = "[" + img.Name + "]"
	}
	return line, file
}

// probeProcLine is the row hpcstruct's getProcLineMap finds for a
// procedure whose entry no row covers (gcc's .cold parts start with a
// landing pad's code, outside every sequence): it probes the addresses
// after the entry 2 bytes apart, doubling the step every 8 misses, within
// the procedure and its first 800 bytes, and once a probe hits after a
// step over 2 it starts again from the last miss at step 2. The line it
// finds puts the procedure's lower lines under <inline> guards
// (libstdc++'s operator new(nothrow) .cold: 51, its line-50 code guarded).
func probeProcLine(lines *loader.LineTable, vma, end uint64) (loader.LineRow, bool) {
	const initStep, maxTries = 2, 8
	end = min(end, vma+800)
	step, tries := uint64(initStep), 0
	for {
		next := vma + step
		if next >= end {
			return loader.LineRow{}, false
		}
		r, ok := lines.Lookup(next)
		ok = ok && r.File != "" // hpcstruct wants a file with any line
		tries++
		switch {
		case ok && step <= initStep:
			return r, true
		case ok:
			step, tries = initStep, 0
		default:
			vma = next
			if tries >= maxTries {
				step, tries = step*2, 0
			}
		}
	}
}

// procName gives hpcstruct's pretty name and link name of a procedure.
func (n *Names) procName(img *loader.Image, fn *loader.Func, sub *loader.Subprogram) (string, string) {
	link := fn.Name
	pretty := link
	if fn.PLT {
		// hpcstruct demangles the stub's symbol, then appends @plt; it
		// keeps the symbol when the demangled text names no function
		// (has none of "()<>"). A stub it found too long for one (more
		// than 32 bytes up to the next function, as after an uncalled
		// stub) has no @plt (also loader.Options.DyninstStubs).
		sym, stub := strings.CutSuffix(link, "@plt")
		if n != nil && n.Hpcstruct && fn.End-fn.Addr > 32 {
			link, stub = sym, false
		}
		d, _ := n.demangle(sym)
		if !strings.ContainsAny(d, "()<>") {
			d = sym
		}
		pretty = d
		if stub {
			pretty += "@plt"
		}
	} else if n != nil && n.DWARFAliases {
		if dn, ok := n.dwarfAlias(fn, sub); ok && longerName(dn, link) {
			link = dn
		}
		if d, ok := n.demangle(link); ok {
			pretty = d
		}
	} else if d, ok := n.demangle(link); ok {
		pretty = d
		if dwarfNameWins(d, sub) {
			pretty, link = sub.Name, sub.Name
		}
	}
	if n != nil && n.Hpcstruct && fn.Found {
		pretty, link = n.foundName(img, fn)
	} else if n.suffixed(img) {
		pretty += " [" + img.Name + "]"
	}
	if pretty == link {
		link = ""
	}
	return pretty, link
}

// suffixed reports whether procedure names get the "[module]" suffix:
// in a shared library, and with Hpcstruct wherever Dyninst does not take
// the file for an executable only (libc.so.6, which can be run, has it).
func (n *Names) suffixed(img *loader.Image) bool {
	if n != nil && n.Hpcstruct {
		return !img.DyninstExec
	}
	return img.Shared
}

// foundName is hpcstruct's pretty and link name of a function ParseAPI
// found without a symbol (a call target, or _start at the entry point):
// hpcstruct takes one of at most 32 bytes (up to the next function) for a
// PLT stub and appends "@plt"; it calls a longer one that Dyninst names
// targ<addr> "<unknown procedure> 0x<addr> [<module>]", keeping targ<addr>
// as the link name. One inside a symbol's extent (loader.Func.Within) is
// never taken for a stub.
func (n *Names) foundName(img *loader.Image, fn *loader.Func) (pretty, link string) {
	link = fn.Name
	suffix := ""
	if n.suffixed(img) {
		suffix = " [" + img.Name + "]"
	}
	switch {
	case fn.End-fn.Addr <= 32 && fn.Within == 0:
		link = strings.TrimSuffix(link, "@plt") + "@plt"
		return link + suffix, link
	case link == fmt.Sprintf("targ%x", fn.Addr):
		return fmt.Sprintf("<unknown procedure> %#x [%s]", fn.Addr, img.Name), link
	}
	return link + suffix, link
}

// dwarfAlias is the name Dyninst's DWARF walk adds to the symbols of the
// procedure starting at fn (hpcstruct then picks the longest of them all,
// as for the symbols): the longest of the linkage name of the subprogram
// whose lowest range starts there, else its DW_AT_name, and the names of
// the declarations below it (loader.Subprogram.DyninstDeclNames). Dyninst refuses a name
// contained in a symbol's name, and a DW_AT_name contained in a symbol's
// demangled name, so "operator()" never names a lambda, while gcc's
// spelling of a template instance with local types (which has no linkage
// name), as "advance<std::pmr::(anonymous namespace)::chunk*, long int>",
// wins where it is longer than the symbol.
func (n *Names) dwarfAlias(fn *loader.Func, sub *loader.Subprogram) (string, bool) {
	if sub == nil || len(sub.Ranges) == 0 || sub.Ranges[0].Lo != fn.Addr {
		return "", false
	}
	name, mangled := sub.LinkName, true
	if name == "" {
		name, mangled = sub.Name, false
	}
	best := ""
	if name != "" && !n.refused(fn, name, mangled) {
		best = name
	}
	for _, d := range sub.DyninstDeclNames {
		if !n.refused(fn, d, true) && longerName(d, best) {
			best = d
		}
	}
	return best, best != ""
}

// refused reports whether Dyninst refuses name as one more name of fn's
// function: a symbol's name contains it, or, for a DW_AT_name, a symbol's
// demangled name does.
func (n *Names) refused(fn *loader.Func, name string, mangled bool) bool {
	for _, a := range fn.Aliases {
		if strings.Contains(a, name) {
			return true
		}
		if d, _ := n.demangle(a); !mangled && strings.Contains(d, name) {
			return true
		}
	}
	return false
}

// dwarfNameWins reports whether the default output names a procedure by
// its DWARF name (and writes no link name) instead of its demangled symbol:
// for instances with a lambda in their template arguments, where gcc
// writes no linkage name. It was an approximation of hpcstruct's choice,
// which dwarfAlias now reproduces in compat mode; kept so the default
// output's names stay as they were.
func dwarfNameWins(demangled string, sub *loader.Subprogram) bool {
	return sub != nil && sub.LinkName == "" && sub.Name != "" && strings.Contains(demangled, "{lambda(")
}

// longerName reports whether hpcstruct's choice among names (the longest,
// ties alphabetical) prefers a to b.
func longerName(a, b string) bool {
	return len(a) > len(b) || len(a) == len(b) && a < b
}

// Demangle returns the GNU-style demangled form of a _Z name (with
// parameters, without return types), or the name itself.
func Demangle(name string) string {
	d, _ := demangleOK(name)
	return d
}

func demangleOK(name string) (string, bool) {
	if !strings.HasPrefix(name, "_Z") {
		return name, true
	}
	ast, err := demangle.ToAST(name, demangle.NoRust, demangle.Verbose)
	if err != nil {
		return name, true
	}
	return withoutReturnType(ast), true
}

// inlineName is the A n of an inlined callee: its demangled linkage name,
// else its DWARF name; remembered per callee record, which the inline
// records of one origin share (a pointer is cheaper to look up than a
// mangled name).
func (n *Names) inlineName(in *loader.Inline) string {
	if n == nil {
		return calleeName(n, in.Callee)
	}
	if v, ok := n.callees.Load(in.Callee); ok {
		return v.(string)
	}
	s := calleeName(n, in.Callee)
	n.callees.Store(in.Callee, s)
	return s
}

func calleeName(n *Names, in *loader.Callee) string {
	if n != nil && n.Hpcstruct && in.DyninstName != "" {
		// hpcstruct demangles the name Dyninst gives (a mangled
		// DW_AT_name too: nvcc 11.2's), and shows it as it is where that
		// fails (a C name, glibc's __GI_ labels, nvcc 11.8's f4_inline).
		if d, ok := n.demangle(in.DyninstName); ok {
			return d
		}
		return in.DyninstName
	}
	link := in.LinkName
	if link != "" {
		d, ok := n.demangle(link)
		if !ok {
			// Only GNU's demangler fails; hpcstruct then shows the
			// linkage name as it is.
			return link
		}
		if d != link {
			return d
		}
	}
	if in.Name != "" {
		return in.Name
	}
	return in.LinkName
}

// withoutReturnType prints a demangled name without the return type that
// the mangling of template functions carries: hpcstruct demangles with
// libiberty's DMGL_RET_DROP, which drops the return type of the function
// the whole name encodes (never one inside it, such as a function-pointer
// parameter's). The return type is removed from a copy of the AST, so
// return types that wrap around the name (a function returning a function
// pointer or an array reference) go too.
func withoutReturnType(a demangle.AST) string {
	return gnuString(dropReturnType(markEmptyPacks(a)))
}

// dropReturnType returns a with the return type of its top-level function
// type removed, sharing every other node.
func dropReturnType(a demangle.AST) demangle.AST {
	switch x := a.(type) {
	case *demangle.Clone:
		if b := dropReturnType(x.Base); b != x.Base {
			return &demangle.Clone{Base: b, Suffix: x.Suffix}
		}
	case *demangle.Typed:
		if t := dropReturnType(x.Type); t != x.Type {
			return &demangle.Typed{Name: x.Name, Type: t}
		}
	case *demangle.MethodWithQualifiers:
		if m := dropReturnType(x.Method); m != x.Method {
			return &demangle.MethodWithQualifiers{Method: m, Qualifiers: x.Qualifiers, RefQualifier: x.RefQualifier}
		}
	case *demangle.FunctionType:
		if x.Return != nil {
			return &demangle.FunctionType{Args: x.Args, ForLocalName: x.ForLocalName}
		}
	}
	return a
}

// emptyPack stands in for an empty template parameter pack at the end of a
// template argument list. The GNU demangler, which hpcstruct's names come
// from, then writes `_Construct<Vec<double, 3>>` without the space it puts
// between other closing brackets; the marker reproduces that.
const emptyPack = "\x01"

// gnuString prints an AST (marked by markEmptyPacks) as the GNU demangler does.
func gnuString(a demangle.AST) string {
	return strings.ReplaceAll(demangle.ASTToString(a), ", "+emptyPack, "")
}

// demangleGNU returns the full demangled name, return type included, as
// c++filt prints it; ok is false when the name does not demangle.
func demangleGNU(name string) (string, bool) {
	a, err := demangle.ToAST(name, demangle.NoRust, demangle.Verbose)
	if err != nil {
		return name, false
	}
	return gnuString(markEmptyPacks(a)), true
}

func markEmptyPacks(a demangle.AST) demangle.AST {
	c := a.Copy(func(x demangle.AST) demangle.AST {
		t, ok := x.(*demangle.Template)
		if !ok || len(t.Args) < 2 {
			return nil
		}
		p, ok := t.Args[len(t.Args)-1].(*demangle.ArgumentPack)
		if !ok || len(p.Args) != 0 {
			return nil
		}
		args := append(append([]demangle.AST(nil), t.Args[:len(t.Args)-1]...), &demangle.Name{Name: emptyPack})
		return &demangle.Template{Name: t.Name, Args: args}
	}, func(demangle.AST) bool { return false })
	if c == nil {
		return a
	}
	return c
}
