package structure

import "sort"

// ProcResult is a finished procedure and the file it belongs to.
type ProcResult struct {
	Scope *Scope
	File  string
}

// NewModule groups procedures by file (files in byte order of their names,
// procedures by entry address).
func NewModule(path, name string, procs []ProcResult) *Module {
	m := &Module{Path: path, Name: name}
	byFile := map[string]*File{}
	for _, p := range procs {
		f := byFile[p.File]
		if f == nil {
			f = &File{Name: p.File}
			byFile[p.File] = f
			m.Files = append(m.Files, f)
		}
		if p.Scope != nil { // nil: a file without procedures
			f.Procs = append(f.Procs, p.Scope)
		}
	}
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Name < m.Files[j].Name })
	for _, f := range m.Files {
		sort.SliceStable(f.Procs, func(i, j int) bool { return f.Procs[i].Entry < f.Procs[j].Entry })
	}
	return m
}
