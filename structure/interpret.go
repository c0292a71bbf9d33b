package structure

import "iter"

// The one interpretation of a scope tree. The format spells four things
// with its A element (an inline pair's call site and its callee, a guard,
// a lone alien context) and leaves files implicit (a statement is in its
// context's file); what a scope is therefore depends on where it is.
// Profiles, pages, the diff and the evaluation all ask Interpret, so they
// cannot disagree on it.

// Role is what a scope is in its tree.
type Role uint8

// Roles.
const (
	RoleProc     Role = iota // a procedure
	RoleInlined              // inlined code: the callee of an inline pair, or a lone alien context
	RoleCallSite             // the call-site half of an inline pair: gives its callee's call file and line
	RoleGuard                // code of the enclosing context that is written in another file
	RoleLoop                 // a loop
	RoleStmt                 // a statement, or a call instruction of GPU code (Scope.Call)
)

// Role is s's role; it depends on s alone (the typed view of a file, see
// ScopeOf, has resolved what depends on the parent).
func (s *Scope) Role() Role {
	switch s.Kind {
	case Proc:
		return RoleProc
	case Loop:
		return RoleLoop
	case Stmt:
		return RoleStmt
	}
	switch s.Inline {
	case InlineCallee, InlineAlien:
		return RoleInlined
	case InlineGuard:
		return RoleGuard
	}
	return RoleCallSite
}

// Ctx is the context a scope is seen in.
type Ctx struct {
	// File is the file of the enclosing context: a procedure's file (its
	// F), an inlined callee's, a loop's or a guard's. A statement without
	// a file of its own is in it.
	File string
	// site is the call site whose callee the scope is, if any.
	site *Scope
}

// FileCtx is the context of the scopes directly in a file: procedures, and
// the loops and statements some files have outside any procedure.
func FileCtx(file string) Ctx { return Ctx{File: file} }

// Item is one scope seen in its context.
type Item struct {
	*Scope
	Role Role
	// File is where the scope is: a statement's own file, else its
	// context's; a procedure's file (its F); a loop's, guard's, call
	// site's or inlined callee's own.
	File string
	// Site is, for the callee of an inline pair, the call site: its File
	// and Line are where the call is. nil for a lone alien context and
	// for every other role.
	Site *Scope
	// In is the context of the scope's children.
	In Ctx
}

// Interpret tells what s is in ctx, and the context of its children.
func Interpret(s *Scope, ctx Ctx) Item {
	it := Item{Scope: s, Role: s.Role(), File: ctx.File}
	switch it.Role {
	case RoleProc:
	case RoleStmt:
		if s.File != "" {
			it.File = s.File
		}
	default:
		// A and L carry their file (the typed view of a file fills in an
		// absent f from the context).
		it.File = s.File
	}
	it.In = Ctx{File: it.File}
	switch it.Role {
	case RoleInlined:
		if s.Inline == InlineCallee {
			it.Site = ctx.site
		}
	case RoleCallSite:
		it.In.site = s
	}
	return it
}

// Children interprets the children of it in its context.
func (it Item) Children() iter.Seq[Item] {
	return func(yield func(Item) bool) {
		for _, c := range it.Scope.Children {
			if !yield(Interpret(c, it.In)) {
				return
			}
		}
	}
}
