package structfile

import (
	"bytes"
	"path/filepath"
	"testing"

	"bloop/diff"
	"bloop/dyninst"
	"bloop/internal/schematest"
	"bloop/internal/sharedrefs"
	"bloop/internal/testenv"
	"bloop/pipeline"
	"bloop/schema"
	"bloop/structure"
)

// TestJSONCallSites: with --gpucfg, a cubin's JSON holds what its XML
// holds, call sites (C, with callee and device) and has-calls included:
// read back, the two are the same tree, and the JSON is valid under the
// structure schema. The JSON once wrote the call sites as statements.
func TestJSONCallSites(t *testing.T) {
	calls := 0
	bins, _ := sharedrefs.GPUCFG("../../shared")
	if len(bins) == 0 {
		testenv.SharedGlob(t, "../../shared/hpctoolkit-cuda/struct/*+gpucfg.hpcstruct")
		t.Fatal("no ../shared cubins with --gpucfg references have their cubin")

	}
	for _, bin := range bins {
		t.Run(filepath.Base(bin), func(t *testing.T) {
			opt := Options{Pipeline: pipeline.Options{Dyninst: dyninst.Hpcstruct, GPUCFG: true, Workers: 1}}
			var xb, jb bytes.Buffer
			if _, err := Write(bin, opt, &xb); err != nil {
				t.Fatal(err)
			}
			opt.JSON = true
			if _, err := Write(bin, opt, &jb); err != nil {
				t.Fatal(err)
			}
			x, err := structure.Parse(bytes.NewReader(xb.Bytes()), bin+".hpcstruct")
			if err != nil {
				t.Fatal(err)
			}
			j, err := structure.Parse(bytes.NewReader(jb.Bytes()), bin+".json")
			if err != nil {
				t.Fatal(err)
			}
			if ok, ds := diff.Equal(x, j); !ok {
				t.Errorf("XML and JSON differ: %v", ds)
			}
			if r := diff.Diff(x, j, diff.DiffOptions{Addresses: true}); !r.Equal() {
				t.Errorf("Diff(XML, JSON) = %+v", r.Summary)
			}
			if err := schematest.ValidateJSON(schema.Structure, jb.Bytes()); err != nil {
				t.Errorf("JSON not valid: %v", err)
			}
			n := bytes.Count(xb.Bytes(), []byte("<C "))
			if got := bytes.Count(jb.Bytes(), []byte(`"kind": "C"`)); got != n {
				t.Errorf("%d call sites in the JSON, %d in the XML", got, n)
			}
			if bytes.Contains(xb.Bytes(), []byte(`has-calls="1"`)) != bytes.Contains(jb.Bytes(), []byte(`"has_calls": true`)) {
				t.Errorf("has-calls differs between XML and JSON")
			}
			calls += n
		})
	}
	if calls == 0 {
		t.Errorf("no call site in any cubin: the test compares nothing of them")
	}
}
