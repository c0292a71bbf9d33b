package sample

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"bloop/perfevent"
)

// Sample fields requested from the kernel, in the order the kernel writes
// them (perf_event.h, PERF_RECORD_SAMPLE).
const sampleType = unix.PERF_SAMPLE_IP | unix.PERF_SAMPLE_TID | unix.PERF_SAMPLE_TIME |
	unix.PERF_SAMPLE_REGS_USER | unix.PERF_SAMPLE_STACK_USER

// openEvent opens the sampling event for pid on one CPU. inherit makes
// the kernel follow the threads and children the program creates; their
// samples go to this event's ring buffer.
func openEvent(pid, cpu int, ev eventSpec, freq, stack int, excludeKernel bool) (int, error) {
	attr := eventAttr(ev, freq, stack, excludeKernel)
	return unix.PerfEventOpen(&attr, pid, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
}

// eventAttr is the attribute of the sampling event.
func eventAttr(ev eventSpec, freq, stack int, excludeKernel bool) unix.PerfEventAttr {
	attr := unix.PerfEventAttr{
		Type:              ev.typ,
		Config:            ev.config,
		Sample:            uint64(freq),
		Sample_type:       sampleType,
		Sample_regs_user:  userRegsMask,
		Sample_stack_user: uint32(stack),
		Bits: unix.PerfBitInherit | unix.PerfBitFreq | unix.PerfBitMmap | unix.PerfBitMmap2 |
			unix.PerfBitComm | unix.PerfBitTask | unix.PerfBitSampleIDAll | unix.PerfBitExcludeHv |
			unix.PerfBitWatermark,
		Wakeup: ringBytes / 2, // see ringBytes
	}
	if excludeKernel {
		attr.Bits |= unix.PerfBitExcludeKernel
	}
	attr.Size = uint32(unsafe.Sizeof(attr))
	return attr
}

// newDecoder returns a decoder of the records of an event opened with
// attr: the same decoder that reads perf.data files, given the bytes the
// kernel was given.
func newDecoder(attr *unix.PerfEventAttr) (*perfevent.Decoder, error) {
	a, err := perfevent.ParseAttr(unsafe.Slice((*byte)(unsafe.Pointer(attr)), attr.Size))
	if err != nil {
		return nil, err
	}
	return perfevent.NewDecoder(&perfevent.Event{Attr: a})
}

// eventSpec selects the counted event.
type eventSpec struct {
	typ    uint32
	config uint64
}

var events = map[string]eventSpec{
	"cpu-clock":    {unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CPU_CLOCK},
	"task-clock":   {unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_TASK_CLOCK},
	"cycles":       {unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CPU_CYCLES},
	"instructions": {unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_INSTRUCTIONS},
}

// ringPages is the size of each per-CPU ring buffer in pages (a power of
// two). Each sample takes its requested stack size of it, copied or not:
// 8 MiB holds 255 samples at the default 32 KiB. The kernel wakes the
// reader each time half of it has been written (an interrupt on the
// sampled CPU: every 128 samples by default, not every 32 as with a
// quarter of the ring and full 64 KiB copies); the reader also drains
// every pollMillis.
const (
	ringPages = 2048
	ringBytes = ringPages * 4096
)

// ring is one mmap'ed perf ring buffer.
type ring struct {
	fd   int
	mem  []byte
	meta *unix.PerfEventMmapPage
	data []byte
	tmp  []byte
}

func mapRing(fd int) (*ring, error) {
	page := os.Getpagesize()
	mem, err := unix.Mmap(fd, 0, page+ringBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	r := &ring{fd: fd, mem: mem, meta: (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0]))}
	off, size := r.meta.Data_offset, r.meta.Data_size
	if off == 0 || size == 0 { // kernels before 4.1
		off, size = uint64(page), ringBytes
	}
	r.data = mem[off : off+size]
	return r, nil
}

// drain passes every complete record to f (valid only during the call)
// and frees its space.
func (r *ring) drain(f func(typ uint32, misc uint16, body []byte)) {
	head := atomic.LoadUint64(&r.meta.Data_head)
	tail := atomic.LoadUint64(&r.meta.Data_tail)
	n := uint64(len(r.data))
	for tail+8 <= head {
		hdr := r.bytes(tail, 8)
		typ := binary.LittleEndian.Uint32(hdr)
		misc := binary.LittleEndian.Uint16(hdr[4:])
		size := uint64(binary.LittleEndian.Uint16(hdr[6:]))
		if size < 8 || tail+size > head || size > n {
			break
		}
		f(typ, misc, r.bytes(tail+8, size-8))
		tail += size
	}
	atomic.StoreUint64(&r.meta.Data_tail, tail)
}

// bytes returns n bytes at ring position pos, copying when they wrap.
func (r *ring) bytes(pos, n uint64) []byte {
	size := uint64(len(r.data))
	off := pos % size
	if off+n <= size {
		return r.data[off : off+n]
	}
	r.tmp = append(r.tmp[:0], r.data[off:]...)
	return append(r.tmp, r.data[:n-(size-off)]...)
}

func (r *ring) close() {
	unix.Munmap(r.mem)
	unix.Close(r.fd)
}

// onlineCPUs parses /sys/devices/system/cpu/online ("0-3,5").
func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil, err
	}
	var cpus []int
	for _, part := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, found := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		z := a
		var err2 error
		if found {
			z, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("cannot parse online CPUs %q", b)
		}
		for c := a; c <= z; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// Why explains a failed perf_event_open in terms a user can act on.
func why(err error) string {
	b, _ := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	p := strings.TrimSpace(string(b))
	switch err {
	case unix.EACCES, unix.EPERM:
		return fmt.Sprintf("perf_event_open: %v (kernel.perf_event_paranoid=%s; need <= 2 for user-space sampling of own processes, or CAP_PERFMON)", err, p)
	case unix.ENOENT, unix.EOPNOTSUPP:
		return fmt.Sprintf("perf_event_open: %v (event not supported on this machine; try -e cpu-clock)", err)
	case unix.ENOSYS:
		return "perf_event_open: not available in this kernel"
	}
	return fmt.Sprintf("perf_event_open: %v (kernel.perf_event_paranoid=%s)", err, p)
}
