package perfevent

import "fmt"

// Names of the generic hardware and software events, by config, as perf
// spells them.
var (
	hardwareNames = []string{"cycles", "instructions", "cache-references", "cache-misses",
		"branches", "branch-misses", "bus-cycles", "stalled-cycles-frontend",
		"stalled-cycles-backend", "ref-cycles"}
	softwareNames = []string{"cpu-clock", "task-clock", "page-faults", "context-switches",
		"cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
		"emulation-faults", "dummy", "bpf-output", "cgroup-switches"}
)

// Clock reports whether the event's sample periods are nanoseconds:
// the cpu-clock and task-clock software events, however the file names
// them ("cpu-clock:ppp", "task-clock:u", "cpu-clock/period=1000000/").
func (a *Attr) Clock() bool {
	return a.Type == TypeSoftware && (a.Config == 0 || a.Config == 1)
}

// DefaultName names an event from its attribute, for files that do not
// name their events: the generic hardware and software events by perf's
// names, others by type and config ("raw 0x1c2", "type 9 config 0x3").
func DefaultName(a *Attr) string {
	switch {
	case a.Type == TypeHardware && a.Config < uint64(len(hardwareNames)):
		return hardwareNames[a.Config]
	case a.Type == TypeSoftware && a.Config < uint64(len(softwareNames)):
		return softwareNames[a.Config]
	case a.Type == TypeRaw:
		return fmt.Sprintf("raw %#x", a.Config)
	}
	return fmt.Sprintf("type %d config %#x", a.Type, a.Config)
}
