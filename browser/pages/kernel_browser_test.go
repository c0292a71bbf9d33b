package pages

import (
	"bytes"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"bloop/browser/browsertest"
	"bloop/internal/viewtest"
	"bloop/view"
)

// TestKernelAddressPage: a structure page whose tree holds a kernel
// procedure at 0xffffffff81000000 shows that address, and its loop's and
// statements' (a JavaScript number would show 0x-7f000000).
func TestKernelAddressPage(t *testing.T) {
	browsertest.Need(t)
	var buf bytes.Buffer
	sw := view.NewStructWriter(&buf, view.StructOptions{})
	sw.BeginModule("vmlinux", "vmlinux")
	sw.Proc("/src/k.c", viewtest.KernelProc())
	sw.EndModule()
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	tb := openPage(t, writeFile(t, "vmlinux.html", buf.Bytes()))
	tb.Do(chromedp.SendKeys(chromedp.CSS("input.search"), "^start_kernel$"), chromedp.Click(chromedp.CSS("ol.hits li")))
	detail := eval[string](tb, `document.querySelector('table.stree tr.sel .detail').textContent`)
	if detail != "line 2, 0xffffffff81000000" {
		t.Errorf("start_kernel's row reads %q, want line 2, 0xffffffff81000000", detail)
	}
	tb.Do(chromedp.Click(chromedp.CSS("table.stree tr.sel .tog")))
	rows := strings.Join(eval[[]string](tb, `[...document.querySelectorAll('table.stree tbody tr')].map(tr => tr.textContent)`), "\n")
	for _, want := range []string{"k.c:30xffffffff81000000 +16", "loop at k.c:40xffffffff81000010"} {
		if !strings.Contains(rows, want) {
			t.Errorf("the tree lacks %q:\n%s", want, rows)
		}
	}
}
