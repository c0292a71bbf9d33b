package view

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"bloop/profile"
)

// TestEnumsEmitted: every value of the Go enums the pages compare
// against is in the page's tables, once, and every name the scripts read
// from them (bloop.enums.T.N, or an alias var X = bloop.enums.T) is
// there; no script compares a kind with a bare number.
func TestEnumsEmitted(t *testing.T) {
	data := enumData()
	values := func(table string) []any {
		var out []any
		for _, v := range data[table] {
			out = append(out, v)
		}
		return out
	}
	ints := func(n int) []any {
		var out []any
		for i := 0; i < n; i++ {
			out = append(out, i)
		}
		return out
	}
	sameSet := func(table string, want []any) {
		got := values(table)
		key := func(v []any) []string {
			var s []string
			for _, x := range v {
				b, _ := json.Marshal(x)
				s = append(s, string(b))
			}
			sort.Strings(s)
			return s
		}
		if !slices.Equal(key(got), key(want)) {
			t.Errorf("enum %s holds %v, want %v", table, key(got), key(want))
		}
	}
	sameSet("scope", ints(SModule+1))
	sameSet("elem", ints(int(profile.ElemStmt)+1))
	sameSet("outcome", ints(int(profile.Failed)+1))
	// The diff page's statuses and change kinds: those its schema allows.
	var sch struct {
		Defs map[string]struct {
			Properties map[string]struct {
				Enum []any `json:"enum"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	b, err := os.ReadFile("../schema/diff-page-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sch); err != nil {
		t.Fatal(err)
	}
	sameSet("change", sch.Defs["change"].Properties["kind"].Enum)
	sameSet("status", sch.Defs["proc"].Properties["status"].Enum)

	alias := regexp.MustCompile(`var (\w+) = bloop\.enums\.(\w+);`)
	direct := regexp.MustCompile(`bloop\.enums\.(\w+)\.(\w+)`)
	bare := regexp.MustCompile(`kind(\[[^\]]*\]|\([^)]*\))\s*[!=]==?\s*\d|case \d+:`)
	ents, err := assets.ReadDir("assets")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".js") {
			continue
		}
		src := asset(e.Name())
		for _, m := range direct.FindAllStringSubmatch(src, -1) {
			if _, ok := data[m[1]][m[2]]; !ok {
				t.Errorf("%s reads bloop.enums.%s.%s, which the page lacks", e.Name(), m[1], m[2])
			}
		}
		for _, a := range alias.FindAllStringSubmatch(src, -1) {
			if data[a[2]] == nil {
				t.Errorf("%s: no enum %s", e.Name(), a[2])
				continue
			}
			for _, m := range regexp.MustCompile(`\b`+a[1]+`\.(\w+)`).FindAllStringSubmatch(src, -1) {
				if _, ok := data[a[2]][m[1]]; !ok {
					t.Errorf("%s reads %s.%s (bloop.enums.%s.%s), which the page lacks", e.Name(), a[1], m[1], a[2], m[1])
				}
			}
		}
		if m := bare.FindString(src); m != "" {
			t.Errorf("%s compares a kind with a number: %q", e.Name(), m)
		}
	}
}
