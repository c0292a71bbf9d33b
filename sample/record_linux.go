package sample

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Options tune a recording.
type Options struct {
	Freq      int    // samples per second per thread; default 1000
	Event     string // cpu-clock (default), task-clock, cycles, instructions
	StackSize int    // bytes of user stack copied per sample; default DefaultStack, at most MaxStack
	Stdin     io.Reader
	Stdout    io.Writer
	Stderr    io.Writer
}

func (o *Options) defaults() error {
	if o.Freq <= 0 {
		o.Freq = 1000
	}
	if o.Event == "" {
		o.Event = "cpu-clock"
	}
	if _, ok := events[o.Event]; !ok {
		return fmt.Errorf("unknown event %q (want cpu-clock, task-clock, cycles or instructions)", o.Event)
	}
	if o.StackSize <= 0 {
		o.StackSize = DefaultStack
	}
	if o.StackSize > MaxStack || o.StackSize%8 != 0 {
		return fmt.Errorf("stack copy size %d: want a multiple of 8 up to %d", o.StackSize, MaxStack)
	}
	return nil
}

// Available checks that perf_event_open can sample a process here, by
// opening (and closing) the default event on this process.
func Available() error {
	if !archOK {
		return errors.New("recording supports x86-64 only")
	}
	cpus, err := onlineCPUs()
	if err != nil {
		return err
	}
	fd, err := openEvent(os.Getpid(), cpus[0], events["cpu-clock"], 1000, 8, true)
	if err != nil {
		return errors.New(why(err))
	}
	unix.Close(fd)
	return nil
}

// Record runs argv under sampling and writes the recording to out. The
// program is started stopped (ptrace stops it at its exec), the events
// are opened on it, one per CPU with inherit so its threads and children
// are followed, the mappings made by exec are read from /proc, and then
// it runs. Later mappings (dlopen) arrive as PERF_RECORD_MMAP2.
func Record(out io.Writer, argv []string, opt Options) (Stats, error) {
	if len(argv) == 0 {
		return Stats{}, errors.New("no program to run")
	}
	if !archOK {
		return Stats{}, errors.New("recording supports x86-64 only")
	}
	if err := opt.defaults(); err != nil {
		return Stats{}, err
	}
	cpus, err := onlineCPUs()
	if err != nil {
		return Stats{}, err
	}
	// ptrace requests must come from the thread that started the child.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = opt.Stdin, opt.Stdout, opt.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := cmd.Start(); err != nil {
		return Stats{}, err
	}
	pid := cmd.Process.Pid
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil || !ws.Stopped() {
		cmd.Process.Kill()
		cmd.Wait()
		return Stats{}, fmt.Errorf("%s did not stop at exec (%v)", argv[0], err)
	}
	var rings []*ring
	defer func() {
		for _, r := range rings {
			r.close()
		}
	}()
	for _, c := range cpus {
		fd, err := openEvent(pid, c, events[opt.Event], opt.Freq, opt.StackSize, true)
		if err == nil {
			var r *ring
			if r, err = mapRing(fd); err == nil {
				rings = append(rings, r)
				continue
			}
			unix.Close(fd)
		}
		cmd.Process.Kill()
		unix.PtraceDetach(pid)
		cmd.Wait()
		return Stats{}, errors.New(why(err))
	}

	w := NewWriter(out)
	w.Meta(Meta{Command: argv, Event: opt.Event, Freq: uint32(opt.Freq), StackSize: uint32(opt.StackSize),
		StartNanos: uint64(time.Now().UnixNano())})
	if err := writeInitialMaps(w, pid); err != nil {
		cmd.Process.Kill()
		unix.PtraceDetach(pid)
		cmd.Wait()
		return Stats{}, err
	}
	if vdso, err := ownVDSO(); err == nil {
		w.Blob(Blob{Name: "[vdso]", Data: vdso})
	}

	// Ctrl-C goes to the program (same process group); the recorder
	// finishes writing when it exits.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	start := time.Now()
	if err := unix.PtraceDetach(pid); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return Stats{}, fmt.Errorf("ptrace detach: %v", err)
	}
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()

	var st Stats
	conv := &converter{w: w, st: &st, stackSize: uint32(opt.StackSize)}
	pfds := make([]unix.PollFd, len(rings))
	for i, r := range rings {
		pfds[i] = unix.PollFd{Fd: int32(r.fd), Events: unix.POLLIN}
	}
	for running := true; running; {
		select {
		case <-done:
			running = false
		case s := <-sigs:
			cmd.Process.Signal(s)
		default:
			if n, _ := unix.Poll(pfds, pollMillis); n > 0 && hungUp(pfds) {
				// The program has exited but Wait has not returned yet:
				// poll would return at once, so wait instead of spinning.
				select {
				case <-done:
				case <-time.After(pollMillis * time.Millisecond):
				}
			}
		}
		for _, r := range rings {
			r.drain(conv.record)
		}
	}
	st.DurationNanos = uint64(time.Since(start).Nanoseconds())
	st.ExitCode = int32(cmd.ProcessState.ExitCode())
	w.Stats(st)
	if err := w.Flush(); err != nil {
		return st, err
	}
	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) {
		return st, waitErr
	}
	return st, nil
}

// pollMillis is how often the recorder drains the ring buffers when the
// kernel does not wake it.
const pollMillis = 100

// hungUp reports whether every event reports POLLHUP: the task it was
// opened on has exited.
func hungUp(pfds []unix.PollFd) bool {
	for _, p := range pfds {
		if p.Revents&unix.POLLHUP == 0 {
			return false
		}
	}
	return true
}

// converter turns kernel records into file records.
type converter struct {
	w         *Writer
	st        *Stats
	stackSize uint32
	s         Sample
}

func (c *converter) record(typ uint32, misc uint16, b []byte) {
	le := binary.LittleEndian
	// Every non-sample record ends with sample_id: pid, tid, time.
	trailerTime := func() uint64 {
		if len(b) >= 8 {
			return le.Uint64(b[len(b)-8:])
		}
		return 0
	}
	switch typ {
	case unix.PERF_RECORD_SAMPLE:
		c.sample(b)
	case unix.PERF_RECORD_MMAP2:
		if len(b) < 8+24+24+8+16 {
			return
		}
		m := Mmap{Pid: le.Uint32(b), Tid: le.Uint32(b[4:]), Addr: le.Uint64(b[8:]), Len: le.Uint64(b[16:]),
			Pgoff: le.Uint64(b[24:]), Prot: le.Uint32(b[56:]), Flags: le.Uint32(b[60:]),
			File: cstring(b[64 : len(b)-16]), Time: trailerTime()}
		c.w.Mmap(m)
	case unix.PERF_RECORD_MMAP:
		if len(b) < 32+16 {
			return
		}
		c.w.Mmap(Mmap{Pid: le.Uint32(b), Tid: le.Uint32(b[4:]), Addr: le.Uint64(b[8:]), Len: le.Uint64(b[16:]),
			Pgoff: le.Uint64(b[24:]), Prot: unix.PROT_EXEC, File: cstring(b[32 : len(b)-16]), Time: trailerTime()})
	case unix.PERF_RECORD_COMM:
		if len(b) < 8+16 {
			return
		}
		c.w.Comm(Comm{Pid: le.Uint32(b), Tid: le.Uint32(b[4:]), Name: cstring(b[8 : len(b)-16]), Time: trailerTime()})
	case unix.PERF_RECORD_FORK, unix.PERF_RECORD_EXIT:
		if len(b) < 24 {
			return
		}
		kind := byte(KindFork)
		if typ == unix.PERF_RECORD_EXIT {
			kind = KindExit
		}
		c.w.Task(kind, Task{Pid: le.Uint32(b), Ppid: le.Uint32(b[4:]), Tid: le.Uint32(b[8:]), Ptid: le.Uint32(b[12:]), Time: le.Uint64(b[16:])})
	case unix.PERF_RECORD_LOST:
		if len(b) >= 16 {
			n := le.Uint64(b[8:])
			c.st.Lost += n
			c.w.Lost(n)
		}
	case unix.PERF_RECORD_LOST_SAMPLES:
		if len(b) >= 8 {
			n := le.Uint64(b)
			c.st.Lost += n
			c.w.Lost(n)
		}
	case unix.PERF_RECORD_THROTTLE:
		c.st.Throttles++
	}
}

// sample parses ip, pid/tid, time, user regs and user stack.
func (c *converter) sample(b []byte) {
	le := binary.LittleEndian
	if len(b) < 32 {
		return
	}
	s := &c.s
	s.Pid, s.Tid, s.Time = le.Uint32(b[8:]), le.Uint32(b[12:]), le.Uint64(b[16:])
	abi := le.Uint64(b[24:])
	p := b[32:]
	c.st.Samples++
	if abi == 0 || len(p) < 8*nUserRegs+8 {
		c.st.Lost++ // no user state (a kernel thread): cannot be attributed
		return
	}
	var regs [nUserRegs]uint64
	for i := range regs {
		regs[i] = le.Uint64(p[8*i:])
	}
	p = p[8*nUserRegs:]
	s.BP, s.SP, s.IP = userRegs(regs)
	size := le.Uint64(p)
	p = p[8:]
	s.StackSize, s.Stack = uint32(size), nil
	if size > 0 && uint64(len(p)) >= size+8 {
		dyn := le.Uint64(p[size:])
		if dyn > size {
			dyn = size
		}
		s.Stack = p[:dyn]
		if dyn == size {
			c.st.FullStacks++
		}
	}
	c.w.Sample(s)
}

func cstring(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// writeInitialMaps records the executable mappings the program has when it
// stops at exec (the executable, the dynamic loader, the vdso): the
// kernel reports only mappings made after the events are opened.
func writeInitialMaps(w *Writer, pid int) error {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m, ok := parseMapsLine(sc.Text())
		if ok && m.Prot&unix.PROT_EXEC != 0 {
			m.Pid, m.Tid = uint32(pid), uint32(pid)
			w.Mmap(m)
		}
	}
	w.Comm(Comm{Pid: uint32(pid), Tid: uint32(pid), Name: commOf(pid)})
	return sc.Err()
}

// parseMapsLine reads "start-end perms offset dev inode path".
func parseMapsLine(line string) (Mmap, bool) {
	f := strings.Fields(line)
	if len(f) < 5 {
		return Mmap{}, false
	}
	lo, hi, _ := strings.Cut(f[0], "-")
	a, err1 := strconv.ParseUint(lo, 16, 64)
	z, err2 := strconv.ParseUint(hi, 16, 64)
	off, err3 := strconv.ParseUint(f[2], 16, 64)
	if err1 != nil || err2 != nil || err3 != nil || z < a {
		return Mmap{}, false
	}
	m := Mmap{Addr: a, Len: z - a, Pgoff: off}
	if strings.Contains(f[1], "r") {
		m.Prot |= unix.PROT_READ
	}
	if strings.Contains(f[1], "x") {
		m.Prot |= unix.PROT_EXEC
	}
	if len(f) >= 6 {
		m.File = strings.Join(f[5:], " ")
	}
	return m, true
}

func commOf(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// ownVDSO copies this process's vdso: the kernel maps the same image into
// every process, so the report can analyse it like a file.
func ownVDSO() ([]byte, error) {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if m, ok := parseMapsLine(line); ok && m.File == "[vdso]" {
			f, err := os.Open("/proc/self/mem")
			if err != nil {
				return nil, err
			}
			defer f.Close()
			data := make([]byte, m.Len)
			if _, err := f.ReadAt(data, int64(m.Addr)); err != nil {
				return nil, err
			}
			return data, nil
		}
	}
	return nil, errors.New("no vdso")
}
