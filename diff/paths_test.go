package diff

import (
	"fmt"
	"strings"
	"testing"

	"bloop/internal/structtest"
)

func formatPaths(ps []PathRange) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "[%#x-%#x) %s\n", p.Lo, p.Hi, p.Path)
	}
	return b.String()
}

func TestPaths(t *testing.T) {
	d := mustParse(t, structtest.SmallDoc, "small")
	want := `[0x100-0x108) main/5
[0x108-0x110) main/L(x.c:6)/7
[0x110-0x118) main/L(x.c:6)/A(x.c:8:)/A(y.h:2:g)/2
`
	if got := formatPaths(Paths(d)); got != want {
		t.Errorf("Paths:\n%s\nwant:\n%s", got, want)
	}

	// ln wins over n; adjacent ranges with one path merge; bytes claimed
	// twice get both paths.
	d = mustParse(t, structtest.WrapProcs(`<P n="f [lib.so]" ln="f" l="1" v="{[0x100-0x101)}"><S l="1" v="{[0x100-0x104) [0x104-0x108) [0x120-0x128)}"/></P>`+
		`<P n="g" l="2" v="{[0x110-0x111)}"><S l="2" v="{[0x106-0x110)}"/></P>`), "overlap")
	want = `[0x100-0x106) f/1
[0x106-0x108) f/1 | g/2
[0x108-0x110) g/2
[0x120-0x128) f/1
`
	if got := formatPaths(Paths(d)); got != want {
		t.Errorf("Paths with overlap:\n%s\nwant:\n%s", got, want)
	}
}

func TestPathAgreement(t *testing.T) {
	ref := mustParse(t, structtest.SmallDoc, "ref")
	tests := []struct {
		name, old, new string
		same, total    uint64
	}{
		{"identical", "", "", 0x18, 0x18},
		{"ids and directories", `i="7" l="7"`, `i="70" l="7"`, 0x18, 0x18},
		{"statement line", `<S i="7" l="7"`, `<S i="7" l="70"`, 0x10, 0x18},
		{"loop line", `<L i="6" l="6"`, `<L i="6" l="60"`, 0x8, 0x18},
		{"statement shorter", `{[0x110-0x118)}`, `{[0x110-0x114)}`, 0x14, 0x18},
		{"statement missing", `<S i="10" l="2" v="{[0x110-0x118)}"/>`, ``, 0x10, 0x18},
	}
	for _, tt := range tests {
		if !strings.Contains(structtest.SmallDoc, tt.old) {
			t.Fatalf("%s: %q not found", tt.name, tt.old)
		}
		got := mustParse(t, strings.Replace(structtest.SmallDoc, tt.old, tt.new, 1), "got")
		same, total := PathAgreement(ref, got)
		if same != tt.same || total != tt.total {
			t.Errorf("%s: PathAgreement = %#x, %#x; want %#x, %#x", tt.name, same, total, tt.same, tt.total)
		}
	}
}
