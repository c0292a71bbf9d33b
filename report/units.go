package report

import (
	"math"
	"strconv"

	"bloop/profile"
)

// durationUnits are the units Duration chooses from, largest first.
var durationUnits = []struct {
	ns   uint64
	name string
}{{1e9, "s"}, {1e6, "ms"}, {1e3, "µs"}, {1, "ns"}}

// Duration formats ns nanoseconds as a person reads time: in the largest
// of s, ms, µs and ns that leaves at least 1, with three significant
// digits (1.23s, 45.6ms, 789µs). The page's bloop.time is the same
// arithmetic, in integers so that both round alike (half up).
func Duration(ns uint64) string {
	if ns == 0 {
		return "0"
	}
	u := durationUnits[len(durationUnits)-1]
	for _, c := range durationUnits {
		if ns >= c.ns {
			u = c
			break
		}
	}
	digits, pow := 0, uint64(1)
	switch {
	case ns < 10*u.ns:
		digits, pow = 2, 100
	case ns < 100*u.ns:
		digits, pow = 1, 10
	}
	if u.ns == 1 {
		digits, pow = 0, 1 // whole nanoseconds
	}
	scaled := (ns*pow*2 + u.ns) / (2 * u.ns)
	s := strconv.FormatUint(scaled, 10)
	if digits > 0 {
		for len(s) <= digits {
			s = "0" + s
		}
		s = s[:len(s)-digits] + "." + s[len(s)-digits:]
	}
	return s + u.name
}

// eventVal formats a value of event i in the event's unit: time as
// Duration, an hpcrun metric of real values as a number, a count as an
// integer.
func eventVal(p *profile.Profile, i int, v uint64) string {
	if ns := p.EventNanos(i); ns > 0 {
		if ns != 1 {
			v = uint64(math.Round(float64(v) * ns))
		}
		return Duration(v)
	}
	if i < len(p.EventScale) && p.EventScale[i] != 1 {
		return strconv.FormatFloat(float64(v)*p.EventScale[i], 'g', 6, 64)
	}
	return strconv.FormatUint(v, 10)
}
