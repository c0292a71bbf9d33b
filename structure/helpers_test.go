package structure

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// wrapProcs puts procedure elements into a one-file structure document.
func wrapProcs(procs string) string {
	return `<?xml version="1.0"?>
<HPCToolkitStructure i="0" version="4.9" n="">
<LM i="2" n="/bin/x" has-calls="0" v="{}">
<F i="3" n="/src/x.c">
` + procs + `</F>
</LM>
</HPCToolkitStructure>
`
}

// startTagRE matches the start tags of a structure file below the root.
var startTagRE = regexp.MustCompile(`<(LM|F|P|A|L|S|C)\b[^>]*>`)

// withIDs gives each element of src below the root that has no id one:
// the parser requires them, and the fixtures leave them out where they do
// not matter (Diff and Equal ignore ids).
func withIDs(src string) string {
	next := 100
	return startTagRE.ReplaceAllStringFunc(src, func(tag string) string {
		if strings.Contains(tag, ` i="`) {
			return tag
		}
		name := startTagRE.FindStringSubmatch(tag)[1]
		next++
		return fmt.Sprintf(`<%s i="%d"%s`, name, next, tag[1+len(name):])
	})
}

func mustParse(t testing.TB, src, name string) *Doc {
	t.Helper()
	d, err := Parse(strings.NewReader(withIDs(src)), name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
