// Package structtest holds the fixtures of the structure-file tests that
// more than one package uses (structure, diff): the reference corpora,
// small documents and the helpers that complete them. It does not import
// structure, so that package's own tests can use it.
package structtest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"bloop/internal/testenv"
)

// Reference corpora written by the real hpcstruct, relative to a package
// directory of the repository.
const (
	HPCToolkitStructDir = "../../shared/hpctoolkit-tests/struct"
	RefsStructDir       = "../../shared/hpcstruct-refs/struct"
)

// RealFiles lists the .hpcstruct files of the reference corpora; empty
// files are returned separately.
func RealFiles(t testing.TB) (nonEmpty, empty []string) {
	t.Helper()
	for _, dir := range []string{HPCToolkitStructDir, RefsStructDir} {
		fs, _ := filepath.Glob(filepath.Join(dir, "*.hpcstruct"))
		for _, f := range fs {
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() == 0 {
				empty = append(empty, f)
			} else {
				nonEmpty = append(nonEmpty, f)
			}
		}
	}
	if len(nonEmpty) == 0 {
		testenv.Absent(t, "reference structure files not found under ../../shared/")
	}
	return nonEmpty, empty
}

// SmallDoc is a small structure file with a loop, an inline pair and
// a DOCTYPE with a comment.
const SmallDoc = `<?xml version="1.0"?>
<!DOCTYPE HPCToolkitStructure [
<!ELEMENT HPCToolkitStructure (LM)*>
<!-- a comment -->
]>
<HPCToolkitStructure i="0" version="4.9" n="">
<LM i="2" n="/bin/x" has-calls="0" v="{}">
<F i="3" n="/src/x.c">
<P i="4" n="main" l="5" v="{[0x100-0x101)}">
<S i="5" l="5" v="{[0x100-0x108)}"/>
<L i="6" l="6" f="/src/x.c" v="{[0x108-0x109)}">
<S i="7" l="7" v="{[0x108-0x110)}"/>
<A i="8" l="8" f="/src/x.c" n="" v="{}">
<A i="9" l="2" f="/src/y.h" n="g" v="{}">
<S i="10" l="2" v="{[0x110-0x118)}"/>
</A>
</A>
</L>
</P>
</F>
</LM>
</HPCToolkitStructure>
`

// WrapProcs puts procedure elements into a one-file structure document.
func WrapProcs(procs string) string {
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

// WithIDs gives each element of src below the root that has no id one:
// the parser requires them, and the fixtures leave them out where they do
// not matter (Diff and Equal ignore ids).
func WithIDs(src string) string {
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
