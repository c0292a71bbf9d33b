// Package scopes places the DWARF of an image's procedures into scope
// trees (structure.Scope): it locates inlined calls, loops and statements
// by their addresses and emits the tree hpcstruct would write. The model
// and its writers live in package structure.
package scopes
