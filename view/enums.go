package view

import (
	"bloop/diff"
	"bloop/profile"
)

// The pages compare kinds, statuses and outcomes by name: each page
// carries these tables, made from the Go constants, in a JSON element of
// its own (id bloop-enums), so that the JavaScript holds no number that
// must match a Go constant by hand.

// enumValue names one constant's value.
type enumValue struct {
	Name  string
	Value any
}

// enums are the tables every page carries, by the name the scripts read
// them under (bloop.enums.NAME.VALUE_NAME).
var enums = []struct {
	Name   string
	Values []enumValue
}{
	// The structure and diff pages' tree nodes (STree.Kind).
	{"scope", []enumValue{{"proc", SProc}, {"inlined", SInlined}, {"loop", SLoop}, {"stmt", SStmt}, {"guard", SGuard}, {"file", SFile}, {"module", SModule}}},
	// The report page's scopes (Scopes.Kind), named as the flat view's
	// kind column names them.
	{"elem", []enumValue{{"proc", int(profile.ElemProc)}, {"inlined", int(profile.ElemInline)}, {"loop", int(profile.ElemLoop)}, {"line", int(profile.ElemStmt)}}},
	// ReportData.Unwind's indices.
	{"outcome", []enumValue{{"complete", int(profile.Complete)}, {"truncated", int(profile.Truncated)}, {"failed", int(profile.Failed)}}},
	// DiffProc.Status.
	{"status", []enumValue{{"changed", diff.ProcChanged}, {"removed", diff.ProcRemoved}, {"added", diff.ProcAdded},
		{"inlined", diff.ProcInlined}, {"outlined", diff.ProcOutlined}, {"folded", diff.ProcFolded}, {"unfolded", diff.ProcUnfolded},
		{"stubAdded", diff.ProcStubAdded}, {"stubRemoved", diff.ProcStubRemoved}, {"renamed", diff.ProcRenamed},
		{"cloned", diff.ProcCloned}, {"split", diff.ProcSplit}, {"joined", diff.ProcJoined}}},
	// DiffChange.Kind.
	{"change", []enumValue{{"loopRemoved", diff.LoopRemoved}, {"loopAdded", diff.LoopAdded}, {"loopMoved", diff.LoopMoved},
		{"loopSplit", diff.LoopSplit}, {"loopFused", diff.LoopFused}, {"inlineRemoved", diff.InlineRemoved},
		{"inlineAdded", diff.InlineAdded}, {"inlineMoved", diff.InlineMoved}, {"stmtIntoLoop", diff.StmtIntoLoop},
		{"stmtOutOfLoop", diff.StmtOutOfLoop}, {"address", diff.AddressChanged}}},
}

// enumData is the tables as the page's JSON: name -> value name ->
// value; encoding/json sorts map keys, so the bytes are stable.
func enumData() map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, e := range enums {
		m := map[string]any{}
		for _, v := range e.Values {
			m[v.Name] = v.Value
		}
		out[e.Name] = m
	}
	return out
}
