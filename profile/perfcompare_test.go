package profile

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"bloop/cache"
)

// perfRow is one row of perf report --no-children --sort dso,sym: an
// event's self share of a procedure.
type perfRow struct {
	dso, sym string
	pct      float64
}

var (
	perfSection = regexp.MustCompile(`^# Samples: .* of event '([^']+)'`)
	perfLine    = regexp.MustCompile(`^\s+([\d.]+)%\s+(\S+)\s+\[[.k]\]\s+(.+?)\s*$`)
)

// parsePerfReport reads perf report's --stdio output: rows by event.
func parsePerfReport(t *testing.T, text string) map[string][]perfRow {
	t.Helper()
	out := map[string][]perfRow{}
	event := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		if m := perfSection.FindStringSubmatch(sc.Text()); m != nil {
			event = m[1]
			continue
		}
		if m := perfLine.FindStringSubmatch(sc.Text()); m != nil && event != "" {
			pct, _ := strconv.ParseFloat(m[1], 64)
			out[event] = append(out[event], perfRow{dso: m[2], sym: m[3], pct: pct})
		}
	}
	return out
}

// procSelf is a procedure's self value in a profile: the samples whose
// innermost frame is in its code (its own, its loops', its inlined
// code's), as perf counts a symbol's.
type procSelf struct {
	module string
	names  map[string]bool // its name and symbol aliases, versions cut off
	pct    float64
}

// procSelves lists the procedures' self shares of the profile's event.
func procSelves(p *Profile) []*procSelf {
	by := map[*Elem]uint64{}
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Excl > 0 {
			for a := n; a != nil && a.Elem != nil; a = a.Parent {
				if a.Elem.Kind == ElemProc {
					by[a.Elem] += n.Excl
					break
				}
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(p.Root)
	var out []*procSelf
	for e, v := range by {
		ps := &procSelf{module: e.Module, names: map[string]bool{unversioned(e.Name): true},
			pct: 100 * float64(v) / float64(max(p.Total, 1))}
		for _, a := range p.Aliases(e) {
			ps.names[unversioned(a)] = true
		}
		out = append(out, ps)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pct > out[j].pct })
	return out
}

// unversioned cuts a symbol version (exp@@GLIBC_2.29) off a name.
func unversioned(s string) string {
	s, _, _ = strings.Cut(s, " [") // structure's names of unsymbolized code: "_start [ld.so]"
	if i := strings.IndexByte(s, '@'); i > 0 && !strings.HasSuffix(s, "@plt") && !strings.HasPrefix(s[i:], "@0x") {
		return s[:i]
	}
	return s
}

// sameProc reports whether perf's symbol names the procedure of those
// names; perf names a PLT stub it cannot resolve "@plt", bloop by its
// target ("targ10200@plt", as objdump does).
func sameProc(sym string, names map[string]bool) bool {
	if sym == "@plt" {
		for n := range names {
			if strings.HasSuffix(n, "@plt") {
				return true
			}
		}
	}
	return names[unversioned(sym)]
}

// perfDSO is the module name bloop gives perf's shared object.
func perfDSO(dso string) string {
	if dso == "[kernel.kallsyms]" {
		return "[kernel]"
	}
	return dso
}

// compareWithPerf requires each procedure's self share of the event,
// perf's rows and bloop's of at least 1%, to agree within 0.5 points. A
// module bloop could not use (another build on this machine: another
// kernel, libc) is compared as a whole. It returns the largest
// deviation.
func compareWithPerf(t *testing.T, p *Profile, rows []perfRow) float64 {
	t.Helper()
	selves := procSelves(p)
	unusable := map[string]bool{}
	for _, m := range p.Modules {
		if m.Err != nil || m.kernel != nil && m.kernel.syms.len() == 0 {
			unusable[m.Name] = true
		}
	}
	worst := 0.0
	check := func(what string, perf, bloop float64) {
		d := math.Abs(perf - bloop)
		worst = max(worst, d)
		if d > 0.5 {
			t.Errorf("%s: perf %.2f%%, bloop %.2f%%", what, perf, bloop)
		}
	}
	perfMod, bloopMod := map[string]float64{}, map[string]float64{}
	for _, r := range rows {
		perfMod[perfDSO(r.dso)] += r.pct
	}
	for _, s := range selves {
		bloopMod[s.module] += s.pct
	}
	for mod, v := range perfMod {
		if v >= 1 || bloopMod[mod] >= 1 {
			check("module "+mod, v, bloopMod[mod])
		}
	}
	matched := map[*procSelf]bool{}
	for _, r := range rows {
		mod := perfDSO(r.dso)
		if unusable[mod] || strings.HasPrefix(r.sym, "0x") {
			continue
		}
		got, any := 0.0, false
		for _, s := range selves {
			if s.module == mod && sameProc(r.sym, s.names) {
				got, any = got+s.pct, true
				matched[s] = true
			}
		}
		if !any {
			if r.pct >= 1 {
				t.Errorf("%s %s: perf %.2f%%, no such procedure in bloop's profile", r.dso, r.sym, r.pct)
			}
			continue
		}
		if r.pct >= 1 || got >= 1 {
			check(r.dso+" "+r.sym, r.pct, got)
		}
	}
	for _, s := range selves {
		if !matched[s] && s.pct >= 1 && !unusable[s.module] {
			t.Errorf("%s %v: bloop %.2f%%, not in perf's report", s.module, s.names, s.pct)
		}
	}
	return worst
}

// scriptTotals sums the periods of each event's samples in a .script
// file (perf script -F event,pid,tid,ip,period,time ...).
func scriptTotals(t *testing.T, path string) map[string]uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^\s*\d+/\d+\s+[\d.]+:\s+(\d+)\s+([\w-]+):`)
	out := map[string]uint64{}
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.ParseUint(m[1], 10, 64)
		out[m[2]] += n
	}
	return out
}

// TestPerfDataCommitted reports the committed perf.data files of each
// call-graph mode (no perf needed): every event's total is the sum of
// its periods in perf script's output, and the flat per-procedure self
// shares are perf report's (committed beside them) within 0.5 points.
func TestPerfDataCommitted(t *testing.T) {
	dir := "../perfevent/testdata"
	bin, _ := filepath.Abs("../testdata/prof/bin")
	c, err := cache.Open(t.TempDir()) // each module analysed once
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"plain", "fp", "dwarf", "pipe", "zstd", "pipe-zstd-dwarf"} {
		t.Run(name, func(t *testing.T) {
			report, err := os.ReadFile(filepath.Join(dir, name+".report"))
			if err != nil {
				t.Fatal(err)
			}
			rows := parsePerfReport(t, string(report))
			totals := scriptTotals(t, filepath.Join(dir, name+".script"))
			for _, event := range []string{"task-clock", "page-faults"} {
				p, err := Build(filepath.Join(dir, name+".data"), Options{Event: event, ModuleDirs: []string{bin}, Cache: c})
				if err != nil {
					t.Fatal(err)
				}
				if p.Total != totals[event] {
					t.Errorf("%s: total %d, perf script's periods sum to %d", event, p.Total, totals[event])
				}
				worst := compareWithPerf(t, p, rows[event])
				t.Logf("%s: %d samples, largest deviation from perf report %.2f points; warnings %q", event, p.EventSamples[p.Event], worst, p.Warnings)
			}
		})
	}
}

// String makes procSelf readable in failures.
func (s *procSelf) String() string { return fmt.Sprintf("%s %v %.2f%%", s.module, s.names, s.pct) }
