package diff

import (
	"bytes"
	"testing"

	"bloop/internal/structtest"
	"bloop/structure"
)

// FuzzDiff checks that any file the reader accepts compares equal to
// itself and to nothing less.
func FuzzDiff(f *testing.F) {
	f.Add([]byte(structtest.SmallDoc))
	f.Add([]byte(`<HPCToolkitStructure><LM><F n="a"><P n="p"><A><S l="1" v="{[0x1-0x2)}"/></A></P></F></LM></HPCToolkitStructure>`))
	for _, c := range diffCases {
		f.Add([]byte(structtest.WithIDs(structtest.WrapProcs(c.a))))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := structure.Parse(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		if ok, ds := Equal(d, d); !ok {
			for _, x := range ds {
				if x.Kind != DiffNoRange && x.Kind != DiffMore {
					t.Fatalf("Equal(d, d): %v", x)
				}
			}
		}
		if r := Diff(d, d, DiffOptions{Addresses: true}); !r.Equal() {
			var b bytes.Buffer
			r.WriteText(&b)
			t.Fatalf("Diff(d, d) not equal:\n%s", b.String())
		}
		ps := Paths(d)
		for i, p := range ps {
			if p.Lo >= p.Hi || (i > 0 && ps[i-1].Hi > p.Lo) {
				t.Fatalf("Paths not sorted/disjoint at %d: %v", i, ps)
			}
		}
		if same, total := PathAgreement(d, d); same != total {
			t.Fatalf("PathAgreement(d, d) = %d, %d", same, total)
		}
	})
}
