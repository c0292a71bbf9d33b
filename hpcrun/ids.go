package hpcrun

import (
	"fmt"
	"strings"
)

// The kinds of an id tuple's levels (the low byte of IDTuple.Kind), as
// the dictionary section of every 2023.08 profile names them.
const (
	KindSummary uint16 = iota
	KindNode
	KindRank
	KindThread
	KindGPUDevice
	KindGPUContext
	KindGPUStream
	KindCore
)

// KindNames are the names of the id-tuple kinds, indexed by kind: the
// dictionary hpcrun writes between the metric table and the values.
var KindNames = []string{"SUMMARY", "NODE", "RANK", "THREAD", "GPUDEVICE", "GPUCONTEXT", "GPUSTREAM", "CORE"}

// How a level's indices are read (bits 14-15 of IDTuple.Kind): both are
// meaningful; only the physical one, hpcprof numbering the logical among
// those sharing the tuple's prefix (LogicLocal) or across all (LogicGlobal);
// only the logical one.
const (
	IDsBoth uint16 = iota
	IDsLogicLocal
	IDsLogicGlobal
	IDsLogicOnly
)

// Compose makes an IDTuple.Kind of a kind and an interpretation.
func Compose(kind, interpret uint16) uint16 { return interpret<<14 | kind }

// HeaderNames are the name-value pairs hpcrun 2023.08 puts in every
// profile's header, in its order.
var HeaderNames = []string{"program-name", "program-path", "env-path", "job-id", "mpi-rank", "thread-id",
	"host-id", "process-id", "trace-min-time", "trace-max-time", "trace-disorder"}

// FileName is the name hpcrun gives a thread's profile: program, MPI
// rank (6 digits), thread (3 digits), host id (8 hex digits), process id
// and generation (a process that execs starts a new one).
func FileName(program string, rank, thread int, hostID, pid uint32, generation int) string {
	return fmt.Sprintf("%s-%06d-%03d-%08x-%d-%d.hpcrun", program, rank, thread, hostID, pid, generation)
}

// KernelModule is the load-map name hpcrun gives the kernel's frames
// (sampled through perf events): no file, so flagged not to analyse.
const KernelModule = "[vmlinux]"

// KernelModuleOf is the load-map name of the kernel's frames bloop
// writes: hpcrun's, with the kernel release they were recorded on when
// known ("[vmlinux-6.1.0-18-amd64]", as its debug image is named), so
// that a reader names them from that kernel's symbols and no other's.
// hpcprof resolves neither name to a file.
func KernelModuleOf(release string) string {
	if release == "" {
		return KernelModule
	}
	return "[vmlinux-" + release + "]"
}

// KernelRelease tells whether a load-map name is the kernel's
// (KernelModuleOf), and the release it names ("" for hpcrun's own name).
func KernelRelease(name string) (release string, ok bool) {
	if name == KernelModule {
		return "", true
	}
	if rest, ok := strings.CutPrefix(name, "[vmlinux-"); ok && strings.HasSuffix(rest, "]") && len(rest) > 1 {
		return strings.TrimSuffix(rest, "]"), true
	}
	return "", false
}
