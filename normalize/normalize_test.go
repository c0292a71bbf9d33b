package normalize

import (
	"fmt"
	"strings"
	"testing"

	"bloop/structure"
)

// Trees are written compactly: P(...), L<line>@<entry>(...), A<file>(...),
// S<line>[lo-hi]. render prints them back the same way.
func render(s *structure.Scope) string {
	var b strings.Builder
	var walk func(x *structure.Scope)
	walk = func(x *structure.Scope) {
		switch x.Kind {
		case structure.Proc:
			b.WriteString("P(")
		case structure.Loop:
			fmt.Fprintf(&b, "L%d@%x(", x.Line, x.Entry)
		case structure.Alien:
			fmt.Fprintf(&b, "A%s:%s(", x.File, x.Name)
		case structure.Stmt:
			fmt.Fprintf(&b, "S%d", x.Line)
			for _, r := range x.Ranges {
				fmt.Fprintf(&b, "[%x-%x]", r.Lo, r.Hi)
			}
			b.WriteString(" ")
			return
		}
		for _, c := range x.Children {
			walk(c)
		}
		b.WriteString(") ")
	}
	walk(s)
	return strings.TrimSpace(strings.ReplaceAll(b.String(), " )", ")"))
}

func st(line int, lo, hi uint64) *structure.Scope {
	return &structure.Scope{Kind: structure.Stmt, Line: line, Ranges: []structure.Range{{Lo: lo, Hi: hi}}}
}

func loop(line int, entry uint64, kids ...*structure.Scope) *structure.Scope {
	return &structure.Scope{Kind: structure.Loop, File: "a.c", Line: line, Entry: entry, Children: kids}
}

func proc(kids ...*structure.Scope) *structure.Scope {
	return &structure.Scope{Kind: structure.Proc, File: "a.c", Children: kids}
}

func alien(file string, kids ...*structure.Scope) *structure.Scope {
	a := structure.NewAlien(file, "", 0)
	a.Children = kids
	return a
}

func TestPasses(t *testing.T) {
	tests := []struct {
		name string
		pass func(*structure.Scope) bool
		in   *structure.Scope
		want string
		same bool
	}{
		{"hoisted line joins its deepest instance", CoalesceDuplicateStatements,
			proc(st(5, 0, 2), loop(4, 0x10, st(5, 0x10, 0x12), loop(6, 0x20, st(5, 0x20, 0x22)))),
			"P(L4@10(L6@20(S5[0-2][10-12][20-22])))", false},
		{"disjoint nests with a common line fuse", CoalesceDuplicateStatements,
			proc(loop(4, 0x10, st(5, 0x10, 0x12)), st(8, 0x18, 0x1a), loop(4, 0x30, st(5, 0x30, 0x32), st(6, 0x32, 0x34))),
			"P(L4@10(S5[10-12][30-32] S6[32-34]) S8[18-1a])", false},
		{"never across procedure contexts", CoalesceDuplicateStatements,
			proc(st(5, 0, 2), alien("b.h", loop(5, 0x10, st(5, 0x10, 0x12)))),
			"P(S5[0-2] Ab.h:(L5@10(S5[10-12])))", true},
		{"perfect nest with identical bounds merges", MergePerfectlyNestedLoops,
			proc(loop(4, 0x10, loop(4, 0x14, st(4, 0x14, 0x18), st(5, 0x18, 0x1c)))),
			"P(L4@10(S4[14-18] S5[18-1c]))", false},
		{"different bounds stay nested", MergePerfectlyNestedLoops,
			proc(loop(4, 0x10, loop(5, 0x14, st(5, 0x14, 0x18)))),
			"P(L4@10(L5@14(S5[14-18])))", true},
		{"empty loops and aliens go", RemoveEmptyScopes,
			proc(loop(4, 0x10), alien("b.h", &structure.Scope{Kind: structure.Stmt, Line: 3}), st(1, 0, 1)),
			"P(S1[0-1])", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			changed := tc.pass(tc.in)
			if got := render(tc.in); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if changed == tc.same {
				t.Errorf("changed = %v", changed)
			}
		})
	}
}

func TestPartitionAlienContexts(t *testing.T) {
	part := func(file string, line int) string {
		switch {
		case line >= 10 && line < 20:
			return "f"
		case line >= 20:
			return "g"
		}
		return ""
	}
	p := proc(alien("b.h", st(12, 0, 2), st(25, 2, 4), loop(21, 0x10, st(22, 0x10, 0x12))))
	if !PartitionAlienContexts(p, part) {
		t.Fatal("no change")
	}
	want := "P(Ab.h:f(S12[0-2]) Ab.h:g(S25[2-4] L21@10(S22[10-12])))"
	if got := render(p); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestRunKeepsBytes checks that a full run to the fixed point keeps every
// code byte in exactly one statement.
func TestRunKeepsBytes(t *testing.T) {
	p := proc(st(5, 0, 2), loop(4, 0x10, st(5, 0x10, 0x12), loop(4, 0x14, st(4, 0x14, 0x16))),
		loop(4, 0x30, st(5, 0x30, 0x32), st(7, 0x32, 0x34)), alien("b.h", loop(9, 0x40)))
	count := func() (n uint64) {
		structure.Walk(p, func(x *structure.Scope) {
			for _, r := range x.Ranges {
				n += r.Hi - r.Lo
			}
		})
		return n
	}
	before := count()
	Run(p, All, nil)
	if after := count(); after != before {
		t.Errorf("%d bytes before, %d after", before, after)
	}
	if got := render(p); strings.Contains(got, "A") {
		t.Errorf("empty alien left: %s", got)
	}
}
