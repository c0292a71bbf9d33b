// Package scopes builds the scope tree of an image (load module > file >
// procedure > alien/loop > statement) and writes it as hpcstruct XML or JSON.
package scopes

import "bloop/loader"

// Kind is the kind of a scope.
type Kind uint8

// Scope kinds, in hpcstruct's element names.
const (
	Proc  Kind = iota // P
	Alien             // A
	Loop              // L
	Stmt              // S
)

// Range is a half-open address interval [Lo, Hi); the loader's, so
// ranges pass between stages without conversion.
type Range = loader.Range

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

	guard  bool // A: a guard alien
	callee bool // A: the inner A of an inline pair
	alien  bool // A: a lone alien context of the thesis engine (file context, no call site)
}

// NewAlien makes a lone alien context: code from another procedure or file,
// without a known call site (the thesis engine's flattened alien contexts).
func NewAlien(file, name string, line int) *Scope {
	return &Scope{Kind: Alien, File: file, Name: name, Line: line, alien: true}
}

// IsLoneAlien reports whether s is a lone alien context (see NewAlien).
func (s *Scope) IsLoneAlien() bool { return s.alien }

// IsContext reports whether s starts a procedure context of its own: a
// procedure, a lone alien, a guard, or the callee of an inline pair.
func (s *Scope) IsContext() bool {
	return s.Kind == Proc || (s.Kind == Alien && (s.alien || s.guard || s.callee))
}

// IsGuard reports whether an alien is a guard ("<inline>").
func (s *Scope) IsGuard() bool { return s.guard }

// IsCallee reports whether an alien is the callee half of an inline pair.
func (s *Scope) IsCallee() bool { return s.callee }

// CallSite is what a call site (C) says beyond its statement: the entry
// of the procedure called and the device ("NVIDIA sm_75").
type CallSite struct {
	Target uint64
	Device string
}

// File groups the procedures of one source file.
type File struct {
	Name  string
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
}

// Walk calls f on s and its descendants in pre-order.
func Walk(s *Scope, f func(*Scope)) {
	f(s)
	for _, c := range s.Children {
		Walk(c, f)
	}
}
