package profile

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"bloop/loader"
	"bloop/scopes"
	"bloop/structure"
)

// A structure file names no build-id or hash of the module it describes,
// so it is checked against the module's code instead: its procedures must
// start where the module has procedures of the same names, and its
// address ranges must lie in the module's code. A structure file of
// another build, or of another program, fails both: its procedures sit at
// other addresses. These checks hold for hpcstruct's files as for bloop's.

// minAgree is the share of a structure file's procedures that must be at
// their symbol's address in the module, and of its statements that must
// have the line the module's line table gives their address. hpcstruct's
// and bloop's files of the module itself agree on all of them (libstdc++:
// 10,425 of 10,426 procedures, 52,131 of 52,131 lines); another build
// keeps at most its start-up code and PLT stubs in place, and code that
// differs moves lines. Builds of identical code pass, rightly.
const minAgree = 0.9

// structCheck is how far one LM of a structure file agrees with a module.
type structCheck struct {
	procs, agree    int    // P elements; those at a procedure of their name
	ranges, outside int    // address ranges; those not in the module's code
	stmts, sameLine int    // statements the line table covers; those of its line
	miss            string // a procedure that does not agree, for the message
}

// ok reports whether the structure describes the module: no code outside
// the module's, and (nearly) every procedure and line where the module has
// them. Without a line table in the module, or lines in the file, the
// procedures decide.
func (c structCheck) ok() bool {
	return c.outside == 0 && float64(c.agree) >= minAgree*float64(c.procs) &&
		float64(c.sameLine) >= minAgree*float64(c.stmts)
}

// score ranks the modules a structure file might describe.
func (c structCheck) score() float64 {
	return ratio(c.agree, c.procs) + ratio(c.sameLine, c.stmts) - ratio(c.outside, c.ranges)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// String says what differed.
func (c structCheck) String() string {
	s := fmt.Sprintf("%d of %d procedures at their symbol's address", c.agree, c.procs)
	if c.miss != "" && c.agree < c.procs {
		s += " (first not: " + c.miss + ")"
	}
	if c.outside > 0 {
		s += fmt.Sprintf(", %d of %d address ranges outside its code", c.outside, c.ranges)
	}
	if c.stmts > 0 {
		s += fmt.Sprintf(", %d of %d statements on the line table's line", c.sameLine, c.stmts)
	}
	return s
}

// checkStructure compares the LM element lm with the module's image.
func checkStructure(lm *structure.Node, img *loader.Image) structCheck {
	img.LoadDWARF() // its line table and procedures
	var c structCheck
	var walk func(n *structure.Node)
	walk = func(n *structure.Node) {
		if n.Tag != "LM" {
			c.countRanges(n, img)
		}
		if n.Tag == "S" {
			c.checkLine(n, img)
		}
		if n.Tag == "P" {
			c.procs++
			if procAgrees(n, img) {
				c.agree++
			} else if c.miss == "" {
				c.miss = missName(n)
			}
		}
		for _, k := range n.Children {
			walk(k)
		}
	}
	walk(lm)
	return c
}

// missName names a procedure that disagrees, briefly (C++ names can run
// to hundreds of characters).
func missName(p *structure.Node) string {
	name := []rune(plainName(p.Value("n")))
	if len(name) > 60 {
		name = append(name[:57], []rune("...")...)
	}
	if rs, err := structure.ParseRanges(p.Value("v")); err == nil && len(rs) > 0 {
		return fmt.Sprintf("%s at %#x", string(name), rs[0].Lo)
	}
	return string(name)
}

// countRanges counts n's address ranges and those outside the code.
func (c *structCheck) countRanges(n *structure.Node, img *loader.Image) {
	v, ok := n.Get("v")
	if !ok {
		return
	}
	rs, err := structure.ParseRanges(v)
	if err != nil {
		c.ranges++
		c.outside++
		return
	}
	for _, r := range rs {
		c.ranges++
		if s := img.SectionAt(r.Lo); s == nil || r.Hi > s.End() {
			c.outside++
		}
	}
}

// checkLine compares a statement's line with the module's line table at
// the statement's first address.
func (c *structCheck) checkLine(s *structure.Node, img *loader.Image) {
	line, _ := strconv.Atoi(s.Value("l"))
	rs, err := structure.ParseRanges(s.Value("v"))
	if line <= 0 || err != nil || len(rs) == 0 || img.Lines == nil {
		return
	}
	row, ok := img.Lines.Lookup(rs[0].Lo)
	if !ok || row.Line <= 0 {
		return
	}
	c.stmts++
	if row.Line == line {
		c.sameLine++
	}
}

// procAgrees reports whether the module has a procedure of p's name at
// p's entry address: a symbol or PLT stub, or a DWARF procedure; for the
// names hpcstruct makes up for code without a symbol (targ<addr>), any
// procedure start the module knows there.
func procAgrees(p *structure.Node, img *loader.Image) bool {
	rs, err := structure.ParseRanges(p.Value("v"))
	if err != nil || len(rs) == 0 {
		return false
	}
	entry := rs[0].Lo
	have := namesAt(img, entry)
	for _, n := range procNames(p) {
		if have[n] {
			return true
		}
	}
	name := plainName(p.Value("n"))
	if strings.TrimSuffix(name, "@plt") == fmt.Sprintf("targ%x", entry) {
		return len(have) > 0 || frameStart(img, entry)
	}
	// DWARF's name of a C++ template ("__move_merge<...>") spells its
	// arguments unlike the demangled symbol: the address decides.
	if p.Value("ln") == "" && strings.Contains(name, "<") {
		for n := range have {
			if strings.HasPrefix(n, "_Z") {
				return true
			}
		}
	}
	return false
}

// procNames are the names a P element gives its procedure: the link name
// and the name, without the " [module]" that hpcstruct appends to code
// without debug information.
func procNames(p *structure.Node) []string {
	var out []string
	for _, k := range []string{"ln", "n"} {
		if v := p.Value(k); v != "" {
			out = append(out, v, plainName(v))
		}
	}
	return out
}

// plainName drops the " [module]" suffix and a symbol version.
func plainName(n string) string {
	if i := strings.LastIndex(n, " ["); i > 0 && strings.HasSuffix(n, "]") {
		n = n[:i]
	}
	if i := strings.Index(n, "@@"); i > 0 {
		n = n[:i]
	}
	return n
}

// namesAt is every name the module gives a procedure starting at addr:
// symbol aliases (as written, without version, demangled) and DWARF names.
func namesAt(img *loader.Image, addr uint64) map[string]bool {
	out := map[string]bool{}
	if fn := img.FuncAt(addr); fn != nil && fn.Addr == addr {
		for _, a := range append([]string{fn.Name}, fn.Aliases...) {
			out[a] = true
			out[plainName(a)] = true
			out[scopes.Demangle(plainName(a))] = true
		}
	}
	if sp := img.SubprogramAt(addr); sp != nil && sp.Entry() == addr {
		for _, a := range []string{sp.Name, sp.LinkName, scopes.Demangle(sp.LinkName)} {
			if a != "" {
				out[a] = true
			}
		}
	}
	return out
}

// frameStart reports whether an .eh_frame FDE starts at addr.
func frameStart(img *loader.Image, addr uint64) bool {
	fs := img.Frames
	i := sort.Search(len(fs), func(i int) bool { return fs[i].Lo >= addr })
	return i < len(fs) && fs[i].Lo == addr
}

// bindStructures finds the module each structure file LM describes and
// checks it does: the module of the LM's name when the recording has one,
// else the module whose code the LM matches best. A structure file that
// does not describe its module is an error, not a silently wrong report.
func (p *Profile) bindStructures(lms []structLM, mods []*Module) error {
	for _, lm := range lms {
		m, err := describedModule(lm, mods)
		if err != nil {
			return err
		}
		if !sameModule(lm.name, m) {
			p.Warnings = append(p.Warnings, fmt.Sprintf("structure file %s names the module %s, but its code matches %s: used for it",
				lm.file, lm.name, m.Path))
		}
		p.bound[m] = lm.index
	}
	return nil
}

// describedModule returns the module lm describes, or an error saying
// what differed.
func describedModule(lm structLM, mods []*Module) (*Module, error) {
	for _, m := range mods {
		if m.Img != nil && sameName(lm.name, m) {
			if c := checkStructure(lm.node, m.Img); !c.ok() {
				return nil, fmt.Errorf("structure file %s is of another build than %s: %v", lm.file, m.Path, c)
			}
			return m, nil
		}
	}
	var best *Module
	var bestCheck structCheck
	for _, m := range mods {
		if m.Img == nil {
			continue
		}
		if c := checkStructure(lm.node, m.Img); best == nil || c.score() > bestCheck.score() {
			best, bestCheck = m, c
		}
	}
	switch {
	case best == nil:
		return nil, fmt.Errorf("structure file %s: the recording has no module to check it against", lm.file)
	case !bestCheck.ok():
		return nil, fmt.Errorf("structure file %s (of %s) matches no module of the recording: the closest is %s, with %v",
			lm.file, lm.name, best.Path, bestCheck)
	}
	return best, nil
}

// sameName reports whether an LM's name is the module's file name.
func sameName(lmName string, m *Module) bool {
	return lmName == m.Path || base(lmName) == m.Name
}

// sameModule reports whether an LM's name is the module's path, as far as
// it says: a relative name (bloop struct writes the path it was given,
// hpcstruct's references their file name) only names the file.
func sameModule(lmName string, m *Module) bool {
	if strings.HasPrefix(lmName, "/") {
		return lmName == m.Path
	}
	return base(lmName) == m.Name
}
