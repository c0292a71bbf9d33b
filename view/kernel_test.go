package view

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"testing"

	"bloop/scopes"
)

// kernelProc is a kernel procedure: its addresses are above 2^63, which
// a JSON number (a JavaScript double) cannot hold exactly.
func kernelProc() *scopes.Scope {
	const entry = 0xffffffff81000000
	loop := &scopes.Scope{Kind: scopes.Loop, File: "/src/k.c", Line: 4, Entry: entry + 0x10,
		Children: []*scopes.Scope{{Kind: scopes.Stmt, Line: 5, Ranges: []scopes.Range{{Lo: entry + 0x10, Hi: entry + 0x18}}}}}
	return &scopes.Scope{Kind: scopes.Proc, Name: "start_kernel", Line: 2, Entry: entry,
		Children: []*scopes.Scope{{Kind: scopes.Stmt, Line: 3, Ranges: []scopes.Range{{Lo: entry, Hi: entry + 0x10}}}, loop}}
}

// TestKernelAddresses: a kernel procedure's addresses are the page
// data's hex text, exact: 0xffffffff81000000, not a wrapped delta.
func TestKernelAddresses(t *testing.T) {
	var page bytes.Buffer
	sw := NewStructWriter(&page, StructOptions{})
	sw.BeginModule("vmlinux", "vmlinux")
	sw.Proc("/src/k.c", kernelProc())
	sw.EndModule()
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="bloop-data">(.*?)</script>`).FindSubmatch(page.Bytes())
	if m == nil {
		t.Fatal("no page data")
	}
	var d StructData
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatal(err)
	}
	want := []string{"", "", "0xffffffff81000000", "0xffffffff81000000", "0xffffffff81000010", "0xffffffff81000010"}
	if !slices.Equal(d.Tree.Addr, want) {
		t.Errorf("addresses %q, want %q", d.Tree.Addr, want)
	}
}
