package diff

import (
	"os"
	"path/filepath"
	"testing"
)

// Reference corpora written by the real hpcstruct; tests skip when absent.
const (
	hpctoolkitStructDir = "../../shared/hpctoolkit-tests/struct"
	refsStructDir       = "../../shared/hpcstruct-refs/struct"
)

// realFiles lists the .hpcstruct files of the reference corpora; empty
// files are returned separately.
func realFiles(t testing.TB) (nonEmpty, empty []string) {
	t.Helper()
	for _, dir := range []string{hpctoolkitStructDir, refsStructDir} {
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
		t.Skip("reference structure files not found under ../../shared/")
	}
	return nonEmpty, empty
}

// smallDoc is structure/parse_test.go's small document.
const smallDoc = `<?xml version="1.0"?>
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
