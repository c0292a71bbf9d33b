package structure

import "strconv"

// The typed view of a structure file: the Scope trees a Doc's elements
// stand for, so that what reads a file interprets it as what reads the
// pipeline's trees does (Interpret). What depends on an element's parent
// is settled here: a named A directly in a call site (an A without a
// name) is the callee of an inline pair, one named "<inline>" a guard,
// any other a lone alien context; an A or L without f is in its
// context's file.

// Modules is the typed view of d's load modules. A procedure, loop or
// statement directly in an LM (no F) is in a File named "".
func (d *Doc) Modules() []*Module {
	var out []*Module
	for _, lm := range d.Root.Children {
		if lm.Tag != "LM" {
			continue
		}
		m := &Module{Path: lm.Value("n"), HasCalls: lm.Value("has-calls") == "1", Src: lm}
		var loose *File // scopes directly in the LM
		for _, c := range lm.Children {
			if c.Tag == "F" {
				f := &File{Name: c.Original().Value("n")}
				for _, p := range c.Children {
					f.Procs = append(f.Procs, ScopeOf(p, f.Name))
				}
				m.Files = append(m.Files, f)
				continue
			}
			if loose == nil {
				loose = &File{}
				m.Files = append(m.Files, loose)
			}
			loose.Procs = append(loose.Procs, ScopeOf(c, ""))
		}
		out = append(out, m)
	}
	return out
}

// ScopeOf is the typed view of element n (P, A, L, S or C) and its
// descendants; file is the file of n's context. Attributes are read as
// the file wrote them (Node.Original: full paths, where a canonical copy
// has base names); Scope.Src is n itself.
func ScopeOf(n *Node, file string) *Scope {
	return scopeOf(n, file, false)
}

func scopeOf(n *Node, file string, inSite bool) *Scope {
	o := n.Original()
	line, _ := strconv.Atoi(o.Value("l"))
	s := &Scope{Line: line, Src: n}
	hasFile := false
	s.File, hasFile = o.Get("f")
	if !hasFile {
		s.File = file
	}
	switch n.Tag {
	case "P":
		s.Kind, s.Name, s.LinkName, s.File = Proc, o.Value("n"), o.Value("ln"), ""
		s.Entry = firstLo(o.Value("v"))
	case "L":
		s.Kind = Loop
		s.Entry = firstLo(o.Value("v"))
		file = s.File
	case "A":
		s.Kind, s.Name = Alien, o.Value("n")
		switch {
		case s.Name == "":
			s.Inline = InlineCall
		case s.Name == GuardName:
			s.Inline = InlineGuard
		case inSite:
			s.Inline = InlineCallee
		default:
			s.Inline = InlineAlien
		}
		file = s.File
	case "S", "C":
		s.Kind, s.File = Stmt, "" // the format gives statements no file
		s.Ranges, _ = ParseRanges(o.Value("v"))
		if n.Tag == "C" {
			t, _ := parseAddr(o.Value("t"))
			s.Call = &CallSite{Target: t, Device: o.Value("d")}
		}
	}
	site := s.Kind == Alien && s.Inline == InlineCall
	if len(n.Children) > 0 {
		s.Children = make([]*Scope, len(n.Children))
		for i, c := range n.Children {
			s.Children[i] = scopeOf(c, file, site)
		}
	}
	return s
}

// firstLo is the lowest address of range set v, 0 when it has none.
func firstLo(v string) uint64 {
	if rs, err := ParseRanges(v); err == nil && len(rs) > 0 {
		return rs[0].Lo
	}
	return 0
}
