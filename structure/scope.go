package structure

// Kind is the kind of a scope.
type Kind uint8

// Scope kinds, in hpcstruct's element names.
const (
	Proc  Kind = iota // P
	Alien             // A
	Loop              // L
	Stmt              // S
)

// Scope is one node of the tree.
type Scope struct {
	Kind     Kind
	Name     string // P: pretty name; A: callee, "" for a call site, "<inline>" for a guard
	LinkName string // P: link name
	File     string // A, L: file; S: the statement's file (not written)
	Line     int
	Entry    uint64  // P, L: the one-byte address written in v
	Ranges   []Range // S: the code; merged and sorted
	Children []*Scope
	// Call marks a statement that is one call instruction of GPU code
	// analysed with a CFG: hpcstruct writes it as a call site (C).
	Call *CallSite
	// Inline says which of the format's uses of an A element this alien
	// is; the writers spell it (JSON "inline"), Interpret reads it.
	Inline Inline
	// Src is the element a scope was read from (ScopeOf); nil in trees
	// the pipeline builds.
	Src *Node
}

// Inline is the role of an alien (A) scope: the format uses one element
// for four things.
type Inline uint8

// Alien roles. The zero value is a call site, as an A without a name is
// in a file.
const (
	InlineCall   Inline = iota // the call-site half of an inline pair (n="")
	InlineCallee               // the inner A of an inline pair: the inlined callee
	InlineGuard                // n="<inline>": the enclosing context's code written in another file
	InlineAlien                // a lone alien context of the thesis engine (file context, no call site)
)

// GuardName is the name a guard alien is written with.
const GuardName = "<inline>"

// NewAlien makes a lone alien context: code from another procedure or file,
// without a known call site (the thesis engine's flattened alien contexts).
func NewAlien(file, name string, line int) *Scope {
	return &Scope{Kind: Alien, File: file, Name: name, Line: line, Inline: InlineAlien}
}

// NewGuard makes a guard alien: code of the enclosing context that the
// line table places in another file.
func NewGuard(file string) *Scope {
	return &Scope{Kind: Alien, Name: GuardName, File: file, Inline: InlineGuard}
}

// NewCallee makes the callee half of an inline pair.
func NewCallee(name, file string) *Scope {
	return &Scope{Kind: Alien, Name: name, File: file, Inline: InlineCallee}
}

// IsLoneAlien reports whether s is a lone alien context (see NewAlien).
func (s *Scope) IsLoneAlien() bool { return s.Kind == Alien && s.Inline == InlineAlien }

// IsContext reports whether s starts a procedure context of its own: a
// procedure, a lone alien, a guard, or the callee of an inline pair.
func (s *Scope) IsContext() bool {
	return s.Kind == Proc || (s.Kind == Alien && s.Inline != InlineCall)
}

// IsGuard reports whether an alien is a guard ("<inline>").
func (s *Scope) IsGuard() bool { return s.Kind == Alien && s.Inline == InlineGuard }

// IsCallee reports whether an alien is the callee half of an inline pair.
func (s *Scope) IsCallee() bool { return s.Kind == Alien && s.Inline == InlineCallee }

// CallSite is what a call site (C) says beyond its statement: the entry
// of the procedure called and the device ("NVIDIA sm_75").
type CallSite struct {
	Target uint64
	Device string
}

// File groups the procedures of one source file.
type File struct {
	Name string
	// Procs are the file's procedures; in a file read back (Doc.Modules)
	// also any loop or statement the F holds outside a procedure, as the
	// format allows.
	Procs []*Scope
}

// Module is one load module.
type Module struct {
	Path  string
	Name  string
	Files []*File
	// HasCalls says that the module's call sites were analysed (GPU code
	// with a CFG): hpcstruct's has-calls="1".
	HasCalls bool
	// Src is the LM element a module was read from (Doc.Modules).
	Src *Node
}

// Walk calls f on s and its descendants in pre-order.
func Walk(s *Scope, f func(*Scope)) {
	f(s)
	for _, c := range s.Children {
		Walk(c, f)
	}
}

// LoopLineTol is how many lines a loop's header line may be from the line
// its loop statement is written on: the thesis's loop begin tolerance.
// Placement snaps headers within it (source.SnapLoops), and diffs of two
// compilers take loops within it of each other for the same loop.
const LoopLineTol = 5
