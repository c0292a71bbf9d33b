package diff

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"bloop/internal/structtest"
	"bloop/structure"
)

// within reports whether n is root or below it.
func within(roots []ProcNode, n *structure.Node) bool {
	for _, r := range roots {
		if inside(r.Node, n) {
			return true
		}
	}
	return false
}

func inside(root, n *structure.Node) bool {
	if root == n {
		return true
	}
	for _, c := range root.Children {
		if inside(c, n) {
			return true
		}
	}
	return false
}

// describe names the elements a change refers to, as "tag:line", the
// callee's name for an inlined call.
func describe(ns []*structure.Node) string {
	var out []string
	for _, n := range ns {
		s := n.Tag + ":" + n.Value("l")
		if n.Tag == "A" {
			s += ":" + n.Value("n")
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// TestDiffDetail: with Detail, every change names the elements it is
// about on both sides, inside that side's tree of its procedure (for an
// addition or removal, the other side's enclosing scope), the JSON report
// is the one without Detail, the identical procedures are listed, and the
// file paths keep their directories.
func TestDiffDetail(t *testing.T) {
	want := map[string][]string{
		"loop-added":               {"P:9 | L:11", "S:11 | S:11"},
		"loop-removed":             {"L:11 | P:9", "S:11 | S:11"},
		"loop-moved":               {"L:20 | L:30"},
		"loop-split":               {"L:30 | L:30 L:30"},
		"loop-fused":               {"L:30 L:30 | L:30"},
		"loop-enclosing-added":     {"P:9 | L:12"},
		"inline-added":             {"P:9 | A:5:g"},
		"inline-removed":           {"A:5:g | P:9"},
		"inline-with-loop-removed": {"A:5:g | P:9"},
		"inline-call-site-moved":   {"A:5:g | A:5:g"},
		"statement-into-loop":      {"S:51 | S:51"},
		"addresses":                {"L:11 | L:11", "S:11 | S:11"},
	}
	for _, c := range diffCases {
		t.Run(c.name, func(t *testing.T) {
			a := mustParse(t, structtest.WrapProcs(c.a), "a.hpcstruct")
			b := mustParse(t, structtest.WrapProcs(c.b), "b.hpcstruct")
			plain := Diff(a, b, c.opts)
			opts := c.opts
			opts.Detail = true
			r := Diff(a, b, opts)
			var j1, j2 bytes.Buffer
			plain.WriteJSON(&j1)
			r.WriteJSON(&j2)
			if !bytes.Equal(j1.Bytes(), j2.Bytes()) {
				t.Errorf("the JSON report changes with Detail:\n%s\n%s", j1.Bytes(), j2.Bytes())
			}
			if plain.Same != nil || len(plain.Procedures) > 0 && plain.Procedures[0].A != nil {
				t.Error("detail kept without Detail")
			}
			var got []string
			for _, p := range r.Procedures {
				if p.Status == ProcChanged && (len(p.A) != 1 || len(p.B) != 1 || p.A[0].Node.Tag != "P" || p.B[0].Node.Tag != "P") {
					t.Errorf("%s: changed, trees %v %v", p.Name, p.A, p.B)
				}
				if p.Status == ProcAdded && (p.A != nil || p.B == nil) || p.Status == ProcRemoved && (p.A == nil || p.B != nil) {
					t.Errorf("%s: %s, trees %v %v", p.Name, p.Status, p.A, p.B)
				}
				for _, pn := range slices.Concat(p.A, p.B) {
					if pn.Path != "/src/x.c" {
						t.Errorf("%s: path %q, want the F's", p.Name, pn.Path)
					}
				}
				for _, ch := range p.Changes {
					if len(ch.InA) == 0 || len(ch.InB) == 0 {
						t.Errorf("%s %s: scopes %v | %v", ch.Kind, ch.Path, ch.InA, ch.InB)
						continue
					}
					for _, n := range ch.InA {
						if !within(p.A, n) {
							t.Errorf("%s %s: %s is not in a's tree", ch.Kind, ch.Path, describe([]*structure.Node{n}))
						}
					}
					for _, n := range ch.InB {
						if !within(p.B, n) {
							t.Errorf("%s %s: %s is not in b's tree", ch.Kind, ch.Path, describe([]*structure.Node{n}))
						}
					}
					got = append(got, describe(ch.InA)+" | "+describe(ch.InB))
				}
			}
			if w, ok := want[c.name]; ok && strings.Join(got, ", ") != strings.Join(w, ", ") {
				t.Errorf("scopes %q, want %q", got, w)
			}
			// main is the same when it has no change of its own.
			same := c.want.isZero() || strings.HasPrefix(c.name, "procedure-")
			if same && (len(r.Same) != 1 || r.Same[0].Name != "main" || r.Same[0].Status != ProcSame) || !same && len(r.Same) != 0 {
				t.Errorf("identical procedures %+v", r.Same)
			}
		})
	}
	// A moved loop's element keeps its file's directory.
	a := mustParse(t, structtest.WrapProcs(diffCases[2].a), "a")
	b := mustParse(t, structtest.WrapProcs(diffCases[2].b), "b")
	r := Diff(a, b, DiffOptions{Detail: true})
	in := r.Procedures[0].Changes[0].InB[0]
	if in.Value("f") != "x.c" || in.Original().Value("f") != "/other/dir/x.c" {
		t.Errorf("b's loop: f %q, as written %q", in.Value("f"), in.Original().Value("f"))
	}
}

func (s Summary) isZero() bool { return s == Summary{} }
