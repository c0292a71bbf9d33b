package profile

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// writeMeasSummary is the summary of a measurement directory: the
// program, each metric's total (the one the views show marked), hpcrun's
// own count of its samples, and the share of partial call paths.
func (p *Profile) writeMeasSummary(w io.Writer) {
	m := p.Meas
	fmt.Fprintf(w, "command:  %s (hpcrun measurements %s: %d profiles)\n", strings.Join(p.Meta.Command, " "), m.Dir, m.Profiles)
	for i, name := range p.Meta.EventNames() {
		mark := ""
		if i == p.Event {
			mark = "  (shown)"
		}
		fmt.Fprintf(w, "metric:   %s: %s at %d nodes, %s under partial call paths%s\n", name, p.eventVal(i, p.EventTotals[i]),
			p.EventSamples[i], p.eventVal(i, m.Partial[i]), mark)
	}
	if m.Logs > 0 {
		fmt.Fprintf(w, "samples:  %d taken, %d recorded, %d blocked, %d errant (hpcrun's .log files, %d)\n",
			m.Log[0], m.Log[1], m.Log[2], m.Log[3], m.Logs)
	}
	p.writeModuleErrors(w)
}

// eventVal formats a value of event i in the event's unit.
func (p *Profile) eventVal(i int, v uint64) string {
	if i < len(p.EventScale) && p.EventScale[i] != 1 {
		return strconv.FormatFloat(float64(v)*p.EventScale[i], 'g', 6, 64)
	}
	return strconv.FormatUint(v, 10)
}
