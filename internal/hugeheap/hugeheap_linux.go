package hugeheap

import (
	"bytes"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Files that say how the kernel gives huge pages; variables for tests.
var (
	modeFile       = "/sys/kernel/mm/transparent_hugepage/enabled"
	pageSizeFile   = "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"
	overcommitFile = "/proc/sys/vm/overcommit_memory"
)

var (
	once    sync.Once
	advised bool
)

// Advise advises the address space the heap grows into next, once per
// process; it reports whether it did. It does not when the kernel gives
// huge pages to every process ("always") or to none ("never", or no
// such support), when the advice could cost the process its memory
// (strict overcommit, a limit on its address space, a Go memory limit),
// or when GODEBUG=disablethp=1 asks the runtime to keep them off.
func Advise() bool {
	once.Do(func() { advised = advise() })
	return advised
}

func advise() bool {
	if !wanted() {
		return false
	}
	huge := hugePageSize()
	n := spanSize()
	if n < 16*huge {
		return false
	}
	b := make([]byte, n) // fresh pages: not written, so not touched
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	beg := (p + huge - 1) &^ (huge - 1)
	end := (p + n) &^ (huge - 1)
	err := unix.Madvise(b[beg-p:end-p], unix.MADV_HUGEPAGE)
	b = nil
	runtime.GC() // the span is free again: the heap grows into it
	return err == nil
}

// wanted tells whether the heap gets huge pages only when advised, and
// the advice is safe.
func wanted() bool {
	if unsafe.Sizeof(uintptr(0)) < 8 {
		return false // the span would be much of the address space
	}
	mode, err := os.ReadFile(modeFile)
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		return false
	}
	if oc, err := os.ReadFile(overcommitFile); err == nil && strings.TrimSpace(string(oc)) == "2" {
		return false // strict: the span would be charged to the process
	}
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_AS, &lim) == nil && lim.Cur != unix.RLIM_INFINITY {
		return false
	}
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return false // a memory limit: a large span would make the collector run at once
	}
	for _, kv := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if strings.TrimSpace(kv) == "disablethp=1" {
			return false
		}
	}
	return true
}

// hugePageSize is the kernel's transparent huge page size, 2 MiB when it
// does not say.
func hugePageSize() uintptr {
	b, err := os.ReadFile(pageSizeFile)
	if err != nil {
		return 2 << 20
	}
	var n uintptr
	for _, c := range bytes.TrimSpace(b) {
		if c < '0' || c > '9' || n > 1<<40 {
			return 2 << 20
		}
		n = n*10 + uintptr(c-'0')
	}
	if n == 0 || n&(n-1) != 0 {
		return 2 << 20
	}
	return n
}

// spanSize is how much address space is advised: a quarter of the
// machine's memory (the kernel's heuristic overcommit refuses a mapping
// larger than its memory and swap), at most 1 GiB. The runtime writes
// metadata for every page of the span and collects it: 7 ms at start
// for 1 GiB, 20 ms for 4 GiB, and the largest reports measured (g++'s
// perf.data) grow their heap to 450 MiB.
func spanSize() uintptr {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	ram := uint64(si.Totalram) * uint64(si.Unit)
	return uintptr(min(ram/4, 1<<30))
}
