package diff

import "testing"

// TestDiffJSONModules: Diff sees the procedures of every module of a
// JSON structure file.
func TestDiffJSONModules(t *testing.T) {
	mod := func(path, proc, entry string) string {
		return `{"path": "` + path + `", "name": "m", "files": [{"name": "a.c", "procs": [` +
			`{"kind": "P", "name": "` + proc + `", "line": 1, "entry": "` + entry + `", "children": [` +
			`{"kind": "S", "line": 1, "ranges": [["` + entry + `", "0x2000"]]}]}]}]}`
	}
	two := mustParse(t, `{"version": 1, "modules": [`+mod("/lib/a.so", "f", "0x1000")+`, `+mod("/lib/b.so", "g", "0x1800")+`]}`, "two.json")
	one := mustParse(t, `{"version": 1, "modules": [`+mod("/lib/a.so", "f", "0x1000")+`]}`, "one.json")
	r := Diff(one, two, DiffOptions{})
	if r.Summary.ProcsAdded != 1 || r.Summary.ProcsDiffer != 1 {
		t.Errorf("one module vs two: summary %+v", r.Summary)
	}
}
