package profile

import (
	"fmt"
	"io"
	"strings"
)

// writePerfSummary is the summary of a perf.data file: perf's command,
// each event's samples and total (the event the views show marked), how
// the call paths were had, and the unwinding of the samples that were
// unwound (--call-graph dwarf).
func (p *Profile) writePerfSummary(w io.Writer) {
	fmt.Fprintf(w, "command:  %s (perf.data)\n", strings.Join(p.Meta.Command, " "))
	for i, name := range p.Meta.EventNames() {
		mark := ""
		if i == p.Event {
			mark = "  (shown: incl and excl are its " + eventUnitWord(name) + ")"
		}
		fmt.Fprintf(w, "event:    %s: %d samples, %d %s%s\n", name, p.EventSamples[i], p.EventTotals[i], eventUnitWord(name), mark)
	}
	fmt.Fprintf(w, "samples:  %d, lost %d\n", p.Samples, p.Lost)
	unwound := p.Samples - p.Chains
	if p.Chains > 0 {
		fmt.Fprintf(w, "paths:    %d samples as perf recorded them: the kernel's call chain (-g), else the sampled instruction alone\n", p.Chains)
	}
	if unwound > 0 {
		p.writeUnwind(w, unwound)
		return
	}
	p.writeModuleErrors(w)
}

// eventUnitWord says what an event's periods count.
func eventUnitWord(name string) string {
	if eventUnit(name) == "nanoseconds" {
		return "ns"
	}
	return "events (period sum)"
}
