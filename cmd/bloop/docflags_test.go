package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The manual's flag tables are written by hand, for readability; these
// tests keep them honest against the flags each command defines, and keep
// the manual's links pointing at files and headings that exist.

// docFiles are the README and the manual, relative to this package.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no ../../docs/*.md")
	}
	return append([]string{"../../README.md"}, files...)
}

// flagMarker names the command whose flags the table after it lists.
var flagMarker = regexp.MustCompile(`^<!-- flags: ([a-z]+) -->$`)

// docTable is one flag table: the command it documents and, per flag
// name (without dashes), the line that documents it.
type docTable struct {
	cmd, where string
	flags      map[string]string
}

// flagTables reads the flag tables of one file. A table whose first
// header cell is "flag" must follow a flagMarker, so that no table of
// flags escapes the check: each that does not is a problem.
func flagTables(path string) (tables []docTable, problems []string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	lines := strings.Split(string(data), "\n")
	cmd := ""
	for i := 0; i < len(lines); i++ {
		if m := flagMarker.FindStringSubmatch(lines[i]); m != nil {
			cmd = m[1]
			continue
		}
		if !strings.HasPrefix(lines[i], "| flag |") {
			if strings.TrimSpace(lines[i]) != "" {
				cmd = ""
			}
			continue
		}
		where := path + ":" + strconv.Itoa(i+1)
		if cmd == "" {
			problems = append(problems, where+": a flag table without a <!-- flags: CMD --> line before it")
		}
		tab := docTable{cmd: cmd, where: where, flags: map[string]string{}}
		for i += 2; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
			for _, name := range rowFlags(lines[i]) {
				tab.flags[name] = path + ":" + strconv.Itoa(i+1)
			}
		}
		tables = append(tables, tab)
		cmd = ""
	}
	return tables, problems, nil
}

// rowFlags returns the flag names of a table row's first cell:
// "`-o`, `--output FILE`" gives o and output.
func rowFlags(row string) []string {
	cells := strings.Split(strings.ReplaceAll(row, `\|`, "\x00"), "|")
	if len(cells) < 2 {
		return nil
	}
	var names []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[1], -1) {
		word := strings.Fields(m[1])[0]
		if strings.HasPrefix(word, "-") {
			names = append(names, strings.TrimLeft(word, "-"))
		}
	}
	return names
}

// helpFlags returns the flag names bloop CMD -h lists, aliases included.
func helpFlags(t *testing.T, cmd string) map[string]bool {
	t.Helper()
	code, out, errOut := captured(t, dispatch, cmd, "-h")
	if code != 0 {
		t.Fatalf("bloop %s -h: exit %d, %s", cmd, code, errOut)
	}
	names := map[string]bool{}
	_, list, ok := strings.Cut(out, "\nflags:\n")
	if !ok {
		return names
	}
	for _, line := range strings.Split(list, "\n") {
		if !strings.HasPrefix(line, "  -") {
			continue // a flag's usage, on the lines below it
		}
		for _, head := range strings.Split(strings.TrimSpace(line), ", ") {
			names[strings.TrimLeft(strings.Fields(head)[0], "-")] = true
		}
	}
	return names
}

// TestDocFlags: every flag a command's -h lists is in that command's
// table in the manual, and every flag a table lists is one the command
// defines. Each command with flags has exactly one table.
func TestDocFlags(t *testing.T) {
	byCmd := map[string][]docTable{}
	for _, f := range docFiles(t) {
		tabs, problems, err := flagTables(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Error(p)
		}
		for _, tab := range tabs {
			byCmd[tab.cmd] = append(byCmd[tab.cmd], tab)
		}
	}
	known := map[string]bool{}
	for _, c := range commands {
		known[c.name] = true
		if c.name == "help" {
			continue
		}
		defined := helpFlags(t, c.name)
		tabs := byCmd[c.name]
		if len(defined) == 0 && len(tabs) == 0 {
			continue
		}
		if len(tabs) != 1 {
			t.Errorf("bloop %s: %d flag tables in the manual, want 1", c.name, len(tabs))
			continue
		}
		tab := tabs[0]
		for _, n := range sortedKeys(defined) {
			if _, ok := tab.flags[n]; !ok {
				t.Errorf("%s: bloop %s defines %s, which its table does not list", tab.where, c.name, dash(n))
			}
		}
		for _, n := range sortedKeys(tab.flags) {
			if !defined[n] {
				t.Errorf("%s: %s is documented, but bloop %s -h does not list it", tab.flags[n], dash(n), c.name)
			}
		}
	}
	for cmd, tabs := range byCmd {
		if !known[cmd] {
			t.Errorf("%s: a flag table for %q, which is no command", tabs[0].where, cmd)
		}
	}
}

// TestDocFlagsNoticesDrift: the table parser finds the flags of a row
// and a wrong table fails, so that TestDocFlags cannot pass by reading
// nothing.
func TestDocFlagsNoticesDrift(t *testing.T) {
	got := rowFlags("| `-I`, `--include`, `--source-dir DIR` | where |")
	if strings.Join(got, " ") != "I include source-dir" {
		t.Errorf("rowFlags: %q", got)
	}
	got = rowFlags("| `--format xml\\|json\\|html` | output |")
	if strings.Join(got, " ") != "format" {
		t.Errorf("rowFlags: %q", got)
	}
	path := filepath.Join(t.TempDir(), "x.md")
	doc := "<!-- flags: record -->\n| flag | meaning |\n|---|---|\n| `-F HZ` | rate |\n| `--nope` | not a flag |\n\n| flag | meaning |\n|---|---|\n"
	if err := os.WriteFile(path, []byte(doc), 0o666); err != nil {
		t.Fatal(err)
	}
	tabs, problems, err := flagTables(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tabs) != 2 || tabs[0].cmd != "record" || len(tabs[0].flags) != 2 || tabs[1].cmd != "" {
		t.Errorf("flagTables: %+v", tabs)
	}
	if len(problems) != 1 {
		t.Errorf("a flag table without a marker: problems %q", problems)
	}
	defined := helpFlags(t, "record")
	if !defined["F"] || !defined["stack"] || defined["nope"] {
		t.Errorf("bloop record -h flags: %v", sortedKeys(defined))
	}
}

// TestDocLinks: every relative link of the README and the manual names a
// file that exists and, with #anchor, a heading of that file.
func TestDocLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchors := map[string]map[string]bool{}
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fence := false
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "```") {
				fence = !fence
			}
			if fence || strings.HasPrefix(line, "    ") {
				continue // code: no links there
			}
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				path := f
				if file != "" {
					path = filepath.Join(filepath.Dir(f), file)
				}
				where := f + ":" + strconv.Itoa(i+1)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link to %s: %v", where, target, err)
					continue
				}
				if anchor == "" {
					continue
				}
				if anchors[path] == nil {
					anchors[path] = headingAnchors(t, path)
				}
				if !anchors[path][anchor] {
					t.Errorf("%s: link to %s: no heading #%s in %s", where, target, anchor, path)
				}
			}
		}
	}
}

// headingAnchors returns the anchors GitHub gives a Markdown file's
// headings: lower case, punctuation dropped but for - and _, spaces as
// -, and -1, -2, ... after repeats.
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	out := map[string]bool{}
	fence := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
