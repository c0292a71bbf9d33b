package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"bloop/profile"
)

// Summary prints what was recorded and how well it unwound. Lost
// samples and truncated stacks are always shown.
func Summary(w io.Writer, p *profile.Profile) {
	if p.Meas != nil {
		measSummary(w, p)
		return
	}
	if p.Meta.Perf {
		perfSummary(w, p)
		return
	}
	fmt.Fprintf(w, "command:  %s\n", strings.Join(p.Meta.Command, " "))
	fmt.Fprintf(w, "event:    %s at %d Hz, %d bytes of stack per sample\n", p.Meta.Event, p.Meta.Freq, p.Meta.StackSize)
	if p.HasStats {
		fmt.Fprintf(w, "run:      %.3fs, %s\n", time.Duration(p.Stats.DurationNanos).Seconds(), p.Stats.Fate())
	}
	fmt.Fprintf(w, "samples:  %d, lost %d", p.Samples, p.Lost)
	if p.HasStats {
		fmt.Fprintf(w, ", stack copies full %d, throttled %d", p.Stats.FullStacks, p.Stats.Throttles)
	}
	fmt.Fprintln(w)
	writeUnwind(w, p, p.Samples)
}

// writeUnwind says how the n unwound samples unwound, and why some failed,
// and which modules could not be read.
func writeUnwind(w io.Writer, p *profile.Profile, n uint64) {
	pct := func(k uint64) float64 { return 100 * float64(k) / float64(max(n, 1)) }
	o, fp := p.Outcomes, p.FPOutcomes
	fmt.Fprintf(w, "unwind:   %.2f%% to the process/thread entry with recipes (%d complete, %d truncated stack, %d failed; %d frames without recipe, by frame pointer or stack scan)\n",
		pct(o[profile.Complete]), o[profile.Complete], o[profile.Truncated], o[profile.Failed], p.FPSteps)
	// What a frame-pointer unwinder (perf's default) gets on the same
	// samples: the measure of what the recipes are worth on this program.
	fmt.Fprintf(w, "          for comparison, frame pointers alone (as perf's default unwinder) would reach it for %.2f%% (%d complete, %d truncated stack, %d failed)\n",
		pct(fp[profile.Complete]), fp[profile.Complete], fp[profile.Truncated], fp[profile.Failed])
	reasons := make([]string, 0, len(p.Reasons))
	for r := range p.Reasons {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool { return p.Reasons[reasons[i]] > p.Reasons[reasons[j]] })
	for _, r := range reasons {
		fmt.Fprintf(w, "          failed: %s (%d)\n", r, p.Reasons[r])
	}
	writeModuleErrors(w, p)
}

// writeModuleErrors names the modules that could not be read, and why.
func writeModuleErrors(w io.Writer, p *profile.Profile) {
	for _, m := range p.Modules {
		if m.Err != nil {
			fmt.Fprintf(w, "module:   %s: %v\n", m.Path, m.Err)
		}
	}
}

// perfSummary is the summary of a perf.data file: perf's command, each
// event's samples and total (the event the views show marked), how the
// call paths were had, and the unwinding of the samples that were
// unwound (--call-graph dwarf).
func perfSummary(w io.Writer, p *profile.Profile) {
	fmt.Fprintf(w, "command:  %s (perf.data)\n", strings.Join(p.Meta.Command, " "))
	for i, name := range p.Meta.EventNames() {
		// A clock's periods add up to time, another event's to events.
		total, what := eventVal(p, i, p.EventTotals[i]), "time"
		if p.EventNanos(i) == 0 {
			what = "events (period sum)"
			total += " " + what
		}
		mark := ""
		if i == p.Event {
			mark = "  (shown: incl and excl are its " + what + ")"
		}
		fmt.Fprintf(w, "event:    %s: %d samples, %s%s\n", name, p.EventSamples[i], total, mark)
	}
	fmt.Fprintf(w, "samples:  %d, lost %d\n", p.Samples, p.Lost)
	unwound := p.Samples - p.Chains
	if p.Chains > 0 {
		fmt.Fprintf(w, "paths:    %d samples as perf recorded them: the kernel's call chain (-g), else the sampled instruction alone\n", p.Chains)
	}
	if unwound > 0 {
		writeUnwind(w, p, unwound)
		return
	}
	writeModuleErrors(w, p)
}

// measSummary is the summary of a measurement directory: the program,
// each metric's total (the one the views show marked), hpcrun's own
// count of its samples, and the share of partial call paths.
func measSummary(w io.Writer, p *profile.Profile) {
	m := p.Meas
	fmt.Fprintf(w, "command:  %s (hpcrun measurements %s: %d profiles)\n", strings.Join(p.Meta.Command, " "), m.Dir, m.Profiles)
	for i, name := range p.Meta.EventNames() {
		mark := ""
		if i == p.Event {
			mark = "  (shown)"
		}
		fmt.Fprintf(w, "metric:   %s: %s at %d nodes, %s under partial call paths%s\n", name, eventVal(p, i, p.EventTotals[i]),
			p.EventSamples[i], eventVal(p, i, m.Partial[i]), mark)
	}
	if m.Logs > 0 {
		fmt.Fprintf(w, "samples:  %d taken, %d recorded, %d blocked, %d errant (hpcrun's .log files, %d)\n",
			m.Log[0], m.Log[1], m.Log[2], m.Log[3], m.Logs)
	}
	writeModuleErrors(w, p)
}
