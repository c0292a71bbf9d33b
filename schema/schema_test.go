package schema_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"bloop/internal/schematest"
	"bloop/internal/testenv"
	"bloop/schema"
)

// TestSchemasCompile: every file compiles (the validator checks it
// against the draft 2020-12 meta-schema), declares that draft and the $id
// of its name, and the named constants are the files there are.
func TestSchemasCompile(t *testing.T) {
	names := schema.Names()
	want := []string{schema.DiffPage, schema.DiffV1, schema.Diff, schema.Manifest, schema.ReportPage, schema.StructPage, schema.Structure}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("schema files %v, want %v", names, want)
	}
	for _, name := range names {
		if _, err := schematest.Compile(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		data, _ := schema.Bytes(name)
		var head struct {
			Schema string `json:"$schema"`
			ID     string `json:"$id"`
		}
		if err := json.Unmarshal(data, &head); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if head.Schema != "https://json-schema.org/draft/2020-12/schema" || head.ID != schema.BaseURL+name {
			t.Errorf("%s: $schema %q, $id %q", name, head.Schema, head.ID)
		}
		if !regexp.MustCompile(`^[a-z-]+-v[1-9][0-9]*\.json$`).MatchString(name) {
			t.Errorf("%s: schema files are named NAME-vN.json", name)
		}
	}
	if _, ok := schema.Bytes("nope.json"); ok {
		t.Error("Bytes of a missing file")
	}
	if _, err := schematest.Compile("nope.json"); err == nil {
		t.Error("Compile of a missing file")
	}
}

// repoJSON lists the JSON and JSON Lines files of the repository (those
// of schema/ aside): the goldens of every test that writes JSON.
func repoJSON(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != ".." && (strings.HasPrefix(name, ".") || p == filepath.Join("..", "schema")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".jsonl") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// kindOf tells which schema a JSON file of the repository follows, by its
// top-level members: "" when none does.
func kindOf(p string, data []byte) string {
	if strings.HasSuffix(p, ".jsonl") {
		return schema.Manifest
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return ""
	}
	switch {
	case top["modules"] != nil:
		return schema.Structure
	case top["tree_a"] != nil:
		return schema.DiffPage
	case top["procedures"] != nil || top["pairs"] != nil:
		return schema.Diff
	case top["outcome"] != nil:
		return schema.Manifest
	case top["threads"] != nil:
		return schema.ReportPage
	case top["tree"] != nil:
		return schema.StructPage
	}
	return ""
}

// TestGoldensValidate: every JSON golden of the repository follows its
// schema: the structure files bloop struct writes for the corpus (all
// architectures), the single-pair and directory diff reports, and any
// manifest. A JSON file no schema covers fails the test, so that a new
// kind of JSON output gets its schema.
func TestGoldensValidate(t *testing.T) {
	files := repoJSON(t)
	counts := map[string]int{}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		kind := kindOf(p, data)
		if kind == "" {
			t.Errorf("%s: no schema covers this JSON file", p)
			continue
		}
		counts[kind]++
		if kind == schema.Manifest && strings.HasSuffix(p, ".jsonl") {
			err = schematest.ValidateLines(kind, data)
		} else {
			err = schematest.ValidateJSON(kind, data)
		}
		if err != nil {
			t.Errorf("%s: %s: %v", p, kind, err)
		}
	}
	t.Logf("validated %v", counts)
	// The corpus goldens (testdata/golden*) and the diff package's reports.
	if counts[schema.Structure] < 200 || counts[schema.Diff] < 20 {
		t.Errorf("validated %v: goldens not found", counts)
	}
}

// editFirst applies edit to the first object of v, in document order,
// that match accepts; false when there is none.
func editFirst(v any, match func(map[string]any) bool, edit func(map[string]any)) bool {
	switch x := v.(type) {
	case map[string]any:
		if match(x) {
			edit(x)
			return true
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if editFirst(x[k], match, edit) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if editFirst(e, match, edit) {
				return true
			}
		}
	}
	return false
}

// Matchers and edits of mutations.
func has(k string) func(map[string]any) bool {
	return func(m map[string]any) bool { _, ok := m[k]; return ok }
}

func is(k string, v any) func(map[string]any) bool {
	return func(m map[string]any) bool { return m[k] == v }
}

func set(k string, v any) func(map[string]any) {
	return func(m map[string]any) { m[k] = v }
}

func del(k string) func(map[string]any) {
	return func(m map[string]any) { delete(m, k) }
}

// mutation makes one rule of a schema fail on a valid document: it edits
// the first object that match accepts.
type mutation struct {
	name  string
	match func(map[string]any) bool
	edit  func(map[string]any)
}

// TestSchemasReject: the schemas are strict; each edit of a valid
// document (a golden) breaks one rule and must make it invalid.
func TestSchemasReject(t *testing.T) {
	cases := []struct {
		schema, file string
		muts         []mutation
	}{
		{schema.Structure, "../testdata/golden/inline-gcc12-O2.json", []mutation{
			{"version 2", has("modules"), set("version", 2)},
			{"no version", has("modules"), del("version")},
			{"unknown top-level member", has("modules"), set("extra", 0)},
			{"empty module list", has("modules"), set("modules", []any{})},
			{"module without files", has("files"), del("files")},
			{"module without name", has("files"), del("name")},
			{"empty file list", has("files"), set("files", []any{})},
			{"file without procs", has("procs"), del("procs")},
			{"empty file name", has("procs"), set("name", "")},
			{"empty procs", has("procs"), set("procs", []any{})},
			{"unknown kind", is("kind", "L"), set("kind", "X")},
			{"procedure among children", is("kind", "L"), set("kind", "P")},
			{"no kind", is("kind", "S"), del("kind")},
			{"no line", is("kind", "S"), del("line")},
			{"negative line", is("kind", "S"), set("line", -1)},
			{"line as a string", is("kind", "S"), set("line", "1")},
			{"fractional line", is("kind", "S"), set("line", 1.5)},
			{"line above 2^32-1", is("kind", "L"), set("line", 4294967296)},
			{"procedure without name", is("kind", "P"), del("name")},
			{"procedure without entry", is("kind", "P"), del("entry")},
			{"loop without entry", is("kind", "L"), del("entry")},
			{"empty link name", is("kind", "P"), set("link_name", "")},
			{"upper-case address", is("kind", "P"), set("entry", "0X1000")},
			{"address with a leading zero", is("kind", "P"), set("entry", "0x01000")},
			{"address without 0x", is("kind", "L"), set("entry", "1000")},
			{"address as a number", is("kind", "L"), set("entry", 4096)},
			{"address longer than 64 bits", is("kind", "L"), set("entry", "0x10000000000000000")},
			{"statement without ranges", is("kind", "S"), del("ranges")},
			{"empty ranges", is("kind", "S"), set("ranges", []any{})},
			{"range of three addresses", is("kind", "S"), set("ranges", []any{[]any{"0x1", "0x2", "0x3"}})},
			{"range of one address", is("kind", "S"), set("ranges", []any{[]any{"0x1"}})},
			{"entry on a statement", is("kind", "S"), set("entry", "0x1")},
			{"children of a statement", is("kind", "S"), set("children", []any{map[string]any{"kind": "S", "line": 1, "ranges": []any{[]any{"0x1", "0x2"}}}})},
			{"lines on a statement", is("kind", "S"), set("lines", []any{1, 2})},
			{"ranges on a loop", is("kind", "L"), set("ranges", []any{[]any{"0x1", "0x2"}})},
			{"inline on a loop", is("kind", "L"), set("inline", "call")},
			{"alien without inline", is("inline", "callee"), del("inline")},
			{"named call site", is("inline", "call"), set("name", "f")},
			{"unknown inline role", is("inline", "call"), set("inline", "site")},
			{"guard not named <inline>", is("inline", "guard"), set("name", "f")},
			{"callee named <inline>", is("inline", "callee"), set("name", "<inline>")},
			{"entry on an alien", is("inline", "callee"), set("entry", "0x1")},
			{"empty file", is("kind", "L"), set("file", "")},
			{"empty children", has("children"), set("children", []any{})},
			{"lines of one number", has("lines"), set("lines", []any{1})},
			{"lines from 0", has("lines"), set("lines", []any{0, 3})},
		}},
		{schema.Diff, "../diff/testdata/diff/inline-with-loop-removed.json", []mutation{
			{"no version", has("procedures"), del("version")},
			{"version 1", has("procedures"), set("version", 1)},
			{"no warnings", has("procedures"), del("warnings")},
			{"unknown also", has("status"), set("also", []any{"changed"})},
			{"now_in on an addition", has("kind"), set("now_in", []any{""})},
			{"callers of a changed procedure", has("status"), set("callers", []any{"f"})},
			{"procedures null", has("procedures"), set("procedures", nil)},
			{"unknown change kind", has("kind"), set("kind", "inline-gone")},
			{"unknown status", has("status"), set("status", "modified")},
			{"negative count", has("loops_removed"), set("loops_removed", -1)},
			{"missing summary count", has("loops_removed"), del("loops_removed")},
			{"unknown summary count", has("loops_removed"), set("loops_kept", 0)},
			{"old on a removal", has("kind"), set("old", "1")},
			{"count on a removal", has("kind"), set("count", 2)},
			{"zero nested loops", has("nested_loops"), set("nested_loops", 0)},
			{"unknown option", has("addresses"), set("fast", true)},
			{"empty pretty name", has("status"), set("pretty", "")},
		}},
		{schema.DiffPage, "../view/testdata/diff-inline.json", []mutation{
			{"version 2", has("tree_a"), set("version", 2)},
			{"no trees", has("tree_a"), del("tree_b")},
			{"unknown member", has("tree_a"), set("extra", 0)},
			{"summary count missing", has("loops_removed"), del("loops_removed")},
			{"pair without same", has("same"), del("same")},
			{"unknown status", has("status"), set("status", "same")},
			{"changed without a's node", is("status", "changed"), set("a", -1)},
			{"changed without changes", is("status", "changed"), set("changes", []any{})},
			{"unknown change kind", is("kind", "loop-removed"), set("kind", "loop-gone")},
			{"change without b", is("kind", "loop-removed"), del("b")},
			{"negative node", is("kind", "loop-removed"), set("a", []any{-1})},
			{"unknown tree column", has("calls"), set("parent", []any{})},
			{"unknown node kind", has("calls"), set("kind", []any{7})},
			{"first string not empty", has("tree_a"), set("strings", []any{"x"})},
		}},
		{schema.Diff, "../diff/testdata/diff/loop-moved.json", []mutation{
			{"moved loop without new", is("kind", "loop-moved"), del("new")},
			{"nested loops on a move", is("kind", "loop-moved"), set("nested_loops", 1)},
		}},
		{schema.Diff, "../diff/testdata/diff/loop-split.json", []mutation{
			{"split without count", is("kind", "loop-split"), del("count")},
			{"split into one loop", is("kind", "loop-split"), set("count", 1)},
		}},
		{schema.Diff, "../diff/testdata/diff/procedure-removed.json", []mutation{
			{"inlined without callers", is("status", "removed"), set("status", "inlined")},
		}},
		{schema.Diff, "../diff/testdata/diff/procedure-added.json", []mutation{
			{"added procedure with changes", is("status", "added"), set("changes", []any{map[string]any{"kind": "loop-added", "path": "L(x.c:1)"}})},
		}},
		{schema.Diff, "../diff/testdata/diff/loop-added.json", []mutation{
			{"changed procedure without changes", is("status", "changed"), set("changes", []any{})},
		}},
		{schema.Diff, "../diff/testdata/dirdiff/malformed.json", []mutation{
			{"pair marked equal with procedures", has("equal"), set("equal", true)},
			{"pair without report", has("equal"), del("report")},
			{"totals without pairs", has("pairs_differ"), del("pairs")},
			{"unknown totals member", has("pairs_differ"), set("pairs_equal", 0)},
			{"report member in totals", has("pairs_differ"), set("procedures", []any{})},
			{"error without message", has("message"), del("message")},
			{"empty relative path", has("equal"), set("path", "")},
			{"no ignored list", has("only_in_a"), del("ignored")},
			{"both forms at once", has("only_in_a"), set("procedures", []any{})},
		}},
	}
	for _, c := range cases {
		data, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if err := schematest.ValidateJSON(c.schema, data); err != nil {
			t.Fatalf("%s: the unmutated file is invalid: %v", c.file, err)
		}
		for _, m := range c.muts {
			var doc any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			if !editFirst(doc, m.match, m.edit) {
				t.Errorf("%s: %s: nothing to edit", c.file, m.name)
				continue
			}
			if err := schematest.Validate(c.schema, doc); err == nil {
				t.Errorf("%s: %s: accepted", filepath.Base(c.file), m.name)
			}
		}
	}
}

// record is a valid manifest record of each outcome, as a map so that
// tests can edit it.
func record(outcome string) map[string]any {
	r := map[string]any{
		"version":      1,
		"path":         "build/bin/loops",
		"operand":      "build",
		"rel":          "bin/loops",
		"outcome":      outcome,
		"wall_seconds": 0.25,
	}
	sha := strings.Repeat("0123456789abcdef", 4)
	switch outcome {
	case "written", "cached":
		r["output"] = "structs/bin/loops.hpcstruct"
		r["input_sha256"] = sha
		r["output_sha256"] = strings.Repeat("f", 64)
		r["procedures"], r["files"], r["loops"], r["inlined_calls"] = 16, 3, 9, 0
		if outcome == "cached" {
			r["cache"] = "remote"
		}
	case "failed":
		r["reason"] = "build/bin/loops: truncated section .debug_info"
		r["input_sha256"] = sha
	case "refused":
		r["reason"] = "build/bin/loops: not an ELF file"
	}
	return r
}

// shard is a valid manifest record's shard.
func shard() map[string]any {
	return map[string]any{"k": 2, "n": 4, "plan": "cost", "digest": "0123456789abcdef"}
}

func with(r map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range r {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

// TestManifestRecords: hand-written records of each outcome validate,
// and records that break the manifest's rules do not.
func TestManifestRecords(t *testing.T) {
	written, cached, failed, refused := record("written"), record("cached"), record("failed"), record("refused")
	valid := map[string]map[string]any{
		"written":                    written,
		"written, no sha of nothing": with(written, "procedures", 0, "files", 0, "loops", 0, "inlined_calls", 0),
		"written with problems":      with(written, "problems", map[string]int{"cfg": 2}, "corrupt", map[string]int{"line-table": 1}, "warnings", []string{"no DWARF"}),
		"cached locally":             with(cached, "cache", "local"),
		"cached, tier unsaid":        with(cached, "cache", nil),
		"failed":                     failed,
		"failed before hashing":      with(failed, "input_sha256", nil),
		"refused":                    refused,
		"zero wall time":             with(refused, "wall_seconds", 0),
		"file operand":               with(written, "path", "loops", "operand", "loops", "rel", "loops"),
		"local debug file":           with(written, "debug_file", "/usr/lib/debug/.build-id/ab/cdef.debug", "debug_source", "local"),
		"debug file from debuginfod": with(cached, "debug_file", "/home/u/.cache/debuginfod_client/abcdef/debuginfo", "debug_source", "debuginfod"),
		"a shard":                    with(written, "shard", shard()),
		"a shard by path":            with(refused, "shard", with(shard(), "plan", "path")),
	}
	for name, r := range valid {
		if err := schematest.Validate(schema.Manifest, r); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	invalid := map[string]map[string]any{
		"written without output":       with(written, "output", nil),
		"written without output sha":   with(written, "output_sha256", nil),
		"written without input sha":    with(written, "input_sha256", nil),
		"written without loops":        with(written, "loops", nil),
		"cached without procedures":    with(cached, "procedures", nil),
		"written with a reason":        with(written, "reason", "x"),
		"cache on written":             with(written, "cache", "local"),
		"unknown cache tier":           with(cached, "cache", "disk"),
		"bad sha: upper case":          with(written, "output_sha256", strings.Repeat("F", 64)),
		"bad sha: short":               with(written, "input_sha256", "abc"),
		"unknown outcome":              with(written, "outcome", "skipped"),
		"no outcome":                   with(written, "outcome", nil),
		"version 2":                    with(written, "version", 2),
		"unknown field":                with(written, "size", 3),
		"debug file, source unsaid":    with(written, "debug_file", "/tmp/x.debug"),
		"debug source, no file":        with(written, "debug_source", "local"),
		"unknown debug source":         with(written, "debug_file", "/tmp/x.debug", "debug_source", "ftp"),
		"empty debug file":             with(written, "debug_file", "", "debug_source", "local"),
		"negative count":               with(written, "loops", -1),
		"fractional count":             with(written, "files", 1.5),
		"negative wall time":           with(written, "wall_seconds", -0.1),
		"no wall time":                 with(written, "wall_seconds", nil),
		"no rel":                       with(written, "rel", nil),
		"refused without reason":       with(refused, "reason", nil),
		"failed without reason":        with(failed, "reason", nil),
		"refused with input sha":       with(refused, "input_sha256", strings.Repeat("a", 64)),
		"refused with output":          with(refused, "output", "x.hpcstruct"),
		"failed with counts":           with(failed, "procedures", 3),
		"reason of two lines":          with(failed, "reason", "a\nb"),
		"problem count of zero":        with(written, "problems", map[string]int{"cfg": 0}),
		"problem count not an integer": with(written, "problems", map[string]any{"cfg": "2"}),
		"warnings not strings":         with(written, "warnings", []int{1}),
		"shard 0":                      with(written, "shard", with(shard(), "k", 0)),
		"shard of no plan":             with(written, "shard", with(shard(), "plan", nil)),
		"shard of an unknown plan":     with(written, "shard", with(shard(), "plan", "size")),
		"shard without digest":         with(written, "shard", with(shard(), "digest", nil)),
		"shard digest not hex":         with(written, "shard", with(shard(), "digest", "0123456789abcdeg")),
		"shard as a string":            with(written, "shard", "1/4"),
		"shard with more":              with(written, "shard", with(shard(), "host", "n1")),
	}
	for name, r := range invalid {
		if err := schematest.Validate(schema.Manifest, r); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// JSON Lines: the failing line is named.
	var buf bytes.Buffer
	for _, r := range []map[string]any{written, refused, with(written, "outcome", "skipped")} {
		b, _ := json.Marshal(r)
		buf.Write(append(b, '\n'))
	}
	if err := schematest.ValidateLines(schema.Manifest, buf.Bytes()); err == nil || !strings.HasPrefix(err.Error(), "line 3: ") {
		t.Errorf("ValidateLines: %v, want an error on line 3", err)
	}
	if err := schematest.ValidateJSON(schema.Manifest, buf.Bytes()); err == nil {
		t.Errorf("ValidateJSON of three records: no error")
	}
}

// TestValidatorNotLinked: the validator is a test dependency only.
func TestValidatorNotLinked(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goCmd := testenv.Need(t, "go")
	out, err := exec.Command(goCmd, "list", "-deps", "bloop/cmd/bloop").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "bloop/structure\n") {
		t.Fatalf("go list -deps bloop/cmd/bloop lacks bloop/structure:\n%s", out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "jsonschema") || dep == "bloop/internal/schematest" {
			t.Errorf("bloop links %s", dep)
		}
	}
}
