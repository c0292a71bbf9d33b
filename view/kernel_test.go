package view

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"testing"

	"bloop/internal/viewtest"
)

// TestKernelAddresses: a kernel procedure's addresses are the page
// data's hex text, exact: 0xffffffff81000000, not a wrapped delta.
func TestKernelAddresses(t *testing.T) {
	var page bytes.Buffer
	sw := NewStructWriter(&page, StructOptions{})
	sw.BeginModule("vmlinux", "vmlinux")
	sw.Proc("/src/k.c", viewtest.KernelProc())
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
