package sample

import (
	"bufio"
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

	"bloop/perfevent"
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
		return errors.New("recording supports x86-64, aarch64 and ppc64le only")
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
		return Stats{}, errors.New("recording supports x86-64, aarch64 and ppc64le only")
	}
	if err := opt.defaults(); err != nil {
		return Stats{}, err
	}
	attr := eventAttr(events[opt.Event], opt.Freq, opt.StackSize, true)
	dec, err := newDecoder(&attr)
	if err != nil {
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
	var ids buildIDs
	if err := writeInitialMaps(w, pid, &ids); err != nil {
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
	conv := &converter{w: w, st: &st, stackSize: uint32(opt.StackSize), dec: dec, ids: &ids}
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
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		st.Signal, st.CoreDumped = int32(ws.Signal()), ws.CoreDump()
		st.SignalName = unix.SignalName(ws.Signal())
	}
	ids.write(w)
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
	dec       *perfevent.Decoder
	s         Sample
	ids       *buildIDs
}

// record converts one ring-buffer record (its body after the header).
// The kernel's records are well formed; one that does not decode is
// dropped (a sample is counted lost).
func (c *converter) record(typ uint32, misc uint16, b []byte) {
	rec, err := c.dec.Decode(perfevent.Header{Type: typ, Misc: misc, Size: uint16(len(b) + 8)}, b)
	if err != nil {
		if typ == unix.PERF_RECORD_SAMPLE {
			c.st.Samples++
			c.st.Lost++
		}
		return
	}
	switch r := rec.(type) {
	case *perfevent.Sample:
		c.sample(r)
	case *perfevent.Mmap:
		if m, ok := perfMmap(r); ok {
			c.w.Mmap(m)
			c.ids.add(m.File)
		}
	case *perfevent.Comm:
		c.w.Comm(perfComm(r))
	case *perfevent.Task:
		kind := byte(KindFork)
		if r.Type == unix.PERF_RECORD_EXIT {
			kind = KindExit
		}
		c.w.Task(kind, perfTask(r))
	case *perfevent.Lost:
		c.st.Lost += r.Lost
		c.w.Lost(r.Lost)
	case *perfevent.Throttle:
		if r.Type == unix.PERF_RECORD_THROTTLE {
			c.st.Throttles++
		}
	}
}

// sample converts a sample: its pid/tid, time, user registers and user
// stack.
func (c *converter) sample(r *perfevent.Sample) {
	c.st.Samples++
	if r.RegsABI == 0 || len(r.Regs) != nUserRegs {
		c.st.Lost++ // no user state (a kernel thread): cannot be attributed
		return
	}
	s := &c.s
	s.Pid, s.Tid, s.Time = r.Pid, r.Tid, r.Time
	hostRegs.read(userRegsMask, r.Regs, s)
	s.StackSize, s.Stack = uint32(r.StackSize), r.Stack
	if r.StackSize > 0 && uint64(len(r.Stack)) == r.StackSize {
		c.st.FullStacks++
	}
	c.w.Sample(s)
}

// writeInitialMaps records the executable mappings the program has when it
// stops at exec (the executable, the dynamic loader, the vdso): the
// kernel reports only mappings made after the events are opened.
func writeInitialMaps(w *Writer, pid int, ids *buildIDs) error {
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
			ids.add(m.File)
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
