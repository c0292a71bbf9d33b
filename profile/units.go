package profile

import "strings"

// What the values of an event measure: time or a count. The views show
// time as time (report's Duration, the page's bloop.time, pprof's
// nanoseconds), counts as they are.

// timeUnits are the units hpcrun's metric descriptors name time in, at
// the end of the metric's name ("REALTIME (sec)", "CPUTIME (usec)" of
// older releases), in nanoseconds.
var timeUnits = map[string]float64{"sec": 1e9, "s": 1e9, "msec": 1e6, "ms": 1e6, "usec": 1e3, "us": 1e3, "nsec": 1, "ns": 1}

// EventNanos is how many nanoseconds one unit of event i's values (as
// the trees hold them) stands for, 0 for an event that counts: perf's
// cpu-clock and task-clock periods are nanoseconds; an hpcrun metric is
// time when its name ends in a time unit (its real values are held in
// nano-units, EventScale). A bloop recording's trees count samples.
func (p *Profile) EventNanos(i int) float64 {
	names := p.Meta.EventNames()
	if i < 0 || i >= len(names) {
		return 0
	}
	switch {
	case p.Meas != nil:
		u := metricTimeUnit(names[i])
		if i < len(p.EventScale) {
			u *= p.EventScale[i]
		}
		return u
	case p.Meta.Perf && i < len(p.Meta.Clocks):
		if p.Meta.Clocks[i] {
			return 1
		}
	case p.Meta.Perf && clockEvent(names[i]):
		return 1
	}
	return 0
}

// clockEvent reports whether a perf event's periods are nanoseconds, by
// its name without perf's modifiers, for profiles that kept no
// attributes.
func clockEvent(name string) bool {
	n := BaseEventName(name)
	return n == "cpu-clock" || n == "task-clock"
}

// BaseEventName is a perf event's name without the modifiers perf
// appends after a colon ("cpu-clock:ppp", "cycles:u" name cpu-clock and
// cycles); a tracepoint's "sched:sched_switch" stays whole.
func BaseEventName(name string) string {
	i := strings.LastIndexByte(name, ':')
	if i < 0 || i == len(name)-1 {
		return name
	}
	for _, c := range name[i+1:] {
		if !strings.ContainsRune(perfModifiers, c) {
			return name
		}
	}
	return name[:i]
}

// perfModifiers are the letters of perf's event modifiers (perf list's
// "u k h I G H p P S D W e b").
const perfModifiers = "ukhIGHpPSDWeb"

// metricTimeUnit is the time unit an hpcrun metric's name ends in, in
// nanoseconds, or 0.
func metricTimeUnit(name string) float64 {
	name = strings.TrimSpace(name)
	i := strings.LastIndexByte(name, '(')
	if i < 0 || !strings.HasSuffix(name, ")") {
		return 0
	}
	return timeUnits[strings.ToLower(strings.TrimSpace(name[i+1:len(name)-1]))]
}
