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

// FuzzDiffPair diffs two documents both ways: what a decided about b is
// the mirror of what b decided about a (added/removed, inlined/outlined,
// split/joined, stubs), and the JSON report is written.
func FuzzDiffPair(f *testing.F) {
	for _, c := range diffCases {
		f.Add([]byte(structtest.WithIDs(structtest.WrapProcs(c.a))), []byte(structtest.WithIDs(structtest.WrapProcs(c.b))))
	}
	f.Add([]byte(structtest.WithIDs(structtest.WrapProcs(handProc("f", 0x100, 10)+handProc("g", 0x200, 0)))),
		[]byte(structtest.WithIDs(structtest.WrapProcs(handProc("f.constprop.0", 0x100, 10, "g")+handProc("f.cold", 0x300, 0)))))
	f.Fuzz(func(t *testing.T, x, y []byte) {
		a, err := structure.Parse(bytes.NewReader(x), "a")
		if err != nil {
			return
		}
		b, err := structure.Parse(bytes.NewReader(y), "b")
		if err != nil {
			return
		}
		ab, ba := Diff(a, b, DiffOptions{}), Diff(b, a, DiffOptions{})
		s, m := ab.Summary, ba.Summary
		if s.ProcsAdded != m.ProcsRemoved || s.ProcsInlined != m.ProcsOutlined || s.ProcsSplit != m.ProcsJoined ||
			s.StubsAdded != m.StubsRemoved || s.ProcsRenamed != m.ProcsRenamed || s.ProcsCloned != m.ProcsCloned {
			t.Fatalf("not mirrored:\n%s\n%s", s, m)
		}
		var buf bytes.Buffer
		if err := ab.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
	})
}
