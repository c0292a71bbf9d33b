// Package sample records a running program with perf_event_open: per
// sample the PC, stack pointer, frame pointer and a copy of the user
// stack, plus the memory mappings of every load module. The recording is a
// file of its own versioned format (see Writer), read back by Reader.
package sample

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// The file format, version 2. All integers are little-endian.
//
//	file   = magic "BLOOPREC" | version u32 | record*
//	record = kind u8 | length u32 | payload[length]
//	string = length u32 | bytes
//
// Payloads by kind (fields in order):
//
//	1 Meta   command []string (count u32, strings), event string,
//	         freq u32, stackSize u32, startNanos u64
//	2 Mmap   pid u32, tid u32, time u64, addr u64, len u64, pgoff u64,
//	         prot u32, flags u32, file string
//	3 Comm   pid u32, tid u32, time u64, name string
//	4 Fork   pid u32, ppid u32, tid u32, ptid u32, time u64
//	5 Exit   pid u32, ppid u32, tid u32, ptid u32, time u64
//	6 Sample pid u32, tid u32, time u64, ip u64, sp u64, bp u64, di u64
//	         (version 2: not in version 1, which is still read),
//	         stackSize u32 (bytes requested), shared u32, stack string
//	         The copied stack (from sp up) is the stack string followed
//	         by the top shared bytes of the previous sample of the same
//	         thread: the same addresses [sp+len(stack), +shared) held
//	         the same bytes then. Deep stacks change only near sp, so
//	         this keeps recordings small.
//	7 Lost   count u64 (samples the kernel dropped)
//	8 Stats  samples u64, lost u64, fullStacks u64, throttles u64,
//	         durationNanos u64, exitCode i32
//	9 Blob   name string, data string (a load module without a file:
//	         the vdso image)
//	10 Status signal u32, coreDumped u32, name string: the program was
//	         killed by that signal (SIGSEGV); written after Stats, whose
//	         exitCode is then -1. No Status: it exited with exitCode.
//	11 SampleLR  a Sample of a machine with a link register (aarch64's
//	         x30, ppc64's LR), which holds a leaf's return address: the
//	         Sample payload with lr u64 after di. Readers that skip it
//	         lose samples they could not unwind.
//	12 BuildID  path string, id string: the GNU build-id note of a
//	         mapped file, read at the end of the run (before Stats), so
//	         that a report elsewhere can tell a rebuilt file and fetch the
//	         recorded one (debuginfod). Readers that skip it trust paths.
//
// Unknown kinds are skipped by readers, so later versions may add kinds;
// a change to an existing payload bumps the version.
const (
	Magic   = "BLOOPREC"
	Version = 2
)

// MaxStack is the largest user-stack copy Linux allows per sample (the
// sample size field is 16 bits): bloop record --stack 65528 asks for it.
const MaxStack = 65528

// DefaultStack is the default user-stack copy per sample. The kernel
// copies from SP up to the requested size or the end of the stack mapping,
// in the sampled thread (outer frames are cold in cache: about 2% of run
// time at 1 kHz for 15 KB copies on a 2-core VM), and reserves the
// requested size in the ring buffer. The unwinder read at most 22,672
// bytes above SP on testdata/prof (deep-gcc12-O2, recursion 599 deep;
// unwind-*, 1000 deep, 18,568): 32 KiB leaves room for deeper stacks.
const DefaultStack = 32768

// Record kinds.
const (
	KindMeta     = 1
	KindMmap     = 2
	KindComm     = 3
	KindFork     = 4
	KindExit     = 5
	KindSample   = 6
	KindLost     = 7
	KindStats    = 8
	KindBlob     = 9
	KindStatus   = 10
	KindSampleLR = 11
	KindBuildID  = 12
)

// Meta describes the recording.
type Meta struct {
	Command    []string
	Event      string
	Freq       uint32
	StackSize  uint32
	StartNanos uint64
	// Perf.data files and measurement directories only (not in bloop's
	// format): every event (metric), in the file's order (Sample.Event indexes it; Event is the first), the
	// kernel release perf recorded on and the build-id it recorded for
	// that kernel (nil when it recorded none).
	Perf          bool
	Events        []string
	OSRelease     string
	KernelBuildID []byte
	// Clocks tells, per event of a perf.data file, whether its periods
	// are nanoseconds (from its attribute, not its name).
	Clocks []bool
	// BuildIDs are the build-ids of a perf.data file's header, by
	// module path, known before its records (also passed as BuildID
	// entries, last).
	BuildIDs map[string][]byte
}

// EventNames lists the recording's events: a bloop recording has one.
func (m Meta) EventNames() []string {
	if m.Perf || len(m.Events) > 0 {
		return m.Events
	}
	return []string{m.Event}
}

// Mmap is an executable mapping of a file (or [vdso]) into a process.
type Mmap struct {
	Pid, Tid         uint32
	Time             uint64
	Addr, Len, Pgoff uint64
	Prot, Flags      uint32
	File             string
}

// Comm names a thread.
type Comm struct {
	Pid, Tid uint32
	Time     uint64
	Name     string
}

// Task is a fork (process or thread creation) or exit.
type Task struct {
	Pid, Ppid, Tid, Ptid uint32
	Time                 uint64
}

// Sample is one sample: the user registers and a copy of the user stack
// starting at SP.
type Sample struct {
	Pid, Tid   uint32
	Time       uint64
	IP, SP, BP uint64
	// DI is the sampled frame's rdi: where glibc's vfork keeps its
	// return address while the call is in the kernel. HasDI: it was
	// recorded (not by version 1 recordings, nor every perf.data file).
	DI    uint64
	HasDI bool
	// LR is the link register of the machines that have one (aarch64's
	// x30, ppc64's LR): the return address of a leaf, or of a procedure
	// before its prologue saves it. HasLR: recorded.
	LR        uint64
	HasLR     bool
	StackSize uint32 // bytes requested
	Stack     []byte // bytes copied (fewer at the top of the stack)
	// StackKept: Stack stays valid after the call that passed the
	// sample, until the scan's Lease is released.
	StackKept bool

	// Perf.data files only (bloop's recordings have one event, counted
	// in samples, and always registers and a stack copy):
	Event     int      // index in Meta.EventNames
	Period    uint64   // the event's count this sample stands for
	Callchain []uint64 // perf's callchain as recorded, innermost first, with context markers
	Kernel    bool     // taken in the kernel: Callchain has the kernel's frames
	NoRegs    bool     // no registers and stack copy: frames from Callchain, else IP alone
}

// Stats summarizes a recording; written last.
type Stats struct {
	Samples, Lost, FullStacks, Throttles uint64
	DurationNanos                        uint64
	ExitCode                             int32 // -1 when killed by a signal
	// Signal is the signal that killed the program (0: it exited), with
	// its name (SIGSEGV) and whether it dumped core: a Status record.
	Signal     int32
	SignalName string
	CoreDumped bool
}

// Status is how the program ended when a signal killed it (a KindStatus
// record); Scan passes it after Stats, and ReadFile folds it into Stats.
type Status struct {
	Signal     int32
	CoreDumped bool
	SignalName string
}

// Apply records st in s.
func (s *Stats) Apply(st Status) {
	s.Signal, s.CoreDumped, s.SignalName = st.Signal, st.CoreDumped, st.SignalName
}

// Fate says how the program ended: "exit status 3", "killed by SIGSEGV
// (core dumped)".
func (s Stats) Fate() string {
	if s.Signal == 0 {
		return fmt.Sprintf("exit status %d", s.ExitCode)
	}
	name := s.SignalName
	if name == "" {
		name = fmt.Sprintf("signal %d", s.Signal)
	}
	f := "killed by " + name
	if s.CoreDumped {
		f += " (core dumped)"
	}
	return f
}

// ShellStatus is the status a shell gives the program: its exit status,
// or 128 plus the signal that killed it.
func (s Stats) ShellStatus() int {
	if s.Signal != 0 {
		return 128 + int(s.Signal)
	}
	return int(max(s.ExitCode, 0))
}

// Blob is a load module image stored in the file.
type Blob struct {
	Name string
	Data []byte
}

// Writer writes a recording.
type Writer struct {
	w    *bufio.Writer
	buf  []byte
	err  error
	prev map[uint32]*Sample // last sample per thread, for the shared stack top
}

// writeBatch is the Writer's buffer: one write system call per
// writeBatch bytes. Small enough to stay in cache: with 4 MiB the
// recorder's CPU time on deep-gcc12-O2 doubled; 256 KiB to 1 MiB
// measured the same.
const writeBatch = 256 << 10

// NewWriter writes the file header to w.
func NewWriter(w io.Writer) *Writer {
	wr := &Writer{w: bufio.NewWriterSize(w, writeBatch), prev: map[uint32]*Sample{}}
	wr.w.WriteString(Magic)
	wr.w.Write(binary.LittleEndian.AppendUint32(nil, Version))
	return wr
}

func (w *Writer) u32(v uint32)    { w.buf = binary.LittleEndian.AppendUint32(w.buf, v) }
func (w *Writer) u64(v uint64)    { w.buf = binary.LittleEndian.AppendUint64(w.buf, v) }
func (w *Writer) str(s string)    { w.u32(uint32(len(s))); w.buf = append(w.buf, s...) }
func (w *Writer) bytes(b []byte)  { w.u32(uint32(len(b))); w.buf = append(w.buf, b...) }
func (w *Writer) begin(kind byte) { w.buf = append(w.buf[:0], kind, 0, 0, 0, 0) }

func (w *Writer) end() error { return w.endWith(nil) }

// endWith writes the record begun in w.buf followed by tail, which ends
// its payload.
func (w *Writer) endWith(tail []byte) error {
	if w.err != nil {
		return w.err
	}
	binary.LittleEndian.PutUint32(w.buf[1:5], uint32(len(w.buf)-5+len(tail)))
	if _, w.err = w.w.Write(w.buf); w.err == nil && len(tail) > 0 {
		_, w.err = w.w.Write(tail)
	}
	return w.err
}

// Meta writes the recording's description.
func (w *Writer) Meta(m Meta) error {
	w.begin(KindMeta)
	w.u32(uint32(len(m.Command)))
	for _, c := range m.Command {
		w.str(c)
	}
	w.str(m.Event)
	w.u32(m.Freq)
	w.u32(m.StackSize)
	w.u64(m.StartNanos)
	return w.end()
}

// Mmap writes a mapping.
func (w *Writer) Mmap(m Mmap) error {
	w.begin(KindMmap)
	w.u32(m.Pid)
	w.u32(m.Tid)
	w.u64(m.Time)
	w.u64(m.Addr)
	w.u64(m.Len)
	w.u64(m.Pgoff)
	w.u32(m.Prot)
	w.u32(m.Flags)
	w.str(m.File)
	return w.end()
}

// BuildID writes the build-id note of a mapped file.
func (w *Writer) BuildID(b BuildID) error {
	w.begin(KindBuildID)
	w.str(b.Path)
	w.bytes(b.ID)
	return w.end()
}

// Comm writes a thread name.
func (w *Writer) Comm(c Comm) error {
	w.begin(KindComm)
	w.u32(c.Pid)
	w.u32(c.Tid)
	w.u64(c.Time)
	w.str(c.Name)
	return w.end()
}

// Task writes a fork (kind KindFork) or exit (KindExit).
func (w *Writer) Task(kind byte, t Task) error {
	w.begin(kind)
	w.u32(t.Pid)
	w.u32(t.Ppid)
	w.u32(t.Tid)
	w.u32(t.Ptid)
	w.u64(t.Time)
	return w.end()
}

// Sample writes a sample (s may be reused after the call).
func (w *Writer) Sample(s *Sample) error {
	if s.HasLR {
		w.begin(KindSampleLR)
	} else {
		w.begin(KindSample)
	}
	w.u32(s.Pid)
	w.u32(s.Tid)
	w.u64(s.Time)
	w.u64(s.IP)
	w.u64(s.SP)
	w.u64(s.BP)
	w.u64(s.DI)
	if s.HasLR {
		w.u64(s.LR)
	}
	w.u32(s.StackSize)
	p := w.prev[s.Tid]
	if p == nil {
		p = &Sample{}
		w.prev[s.Tid] = p
	}
	shared := sharedTop(p, s)
	w.u32(uint32(shared))
	stack := s.Stack[:len(s.Stack)-shared]
	w.u32(uint32(len(stack)))
	err := w.endWith(stack) // the stack goes straight to the buffer, not through w.buf
	p.SP, p.Stack = s.SP, append(p.Stack[:0], s.Stack...)
	return err
}

// sharedChunk is the block sharedTop compares at once before it narrows
// down to words: most of a deep stack is unchanged between samples.
const sharedChunk = 512

// sharedTop counts the bytes at the top of s's stack copy that the
// previous copy p holds at the same addresses, in whole words.
func sharedTop(p, s *Sample) int {
	top := s.SP + uint64(len(s.Stack))
	if len(p.Stack) == 0 || top > p.SP+uint64(len(p.Stack)) || top <= p.SP {
		return 0
	}
	old := p.Stack[:top-p.SP] // ends at the same address as s.Stack
	n := min(len(s.Stack), len(old)) &^ 7
	a, b := s.Stack[len(s.Stack)-n:], old[len(old)-n:]
	i := n // a[i:] == b[i:]
	for i >= sharedChunk && bytes.Equal(a[i-sharedChunk:i], b[i-sharedChunk:i]) {
		i -= sharedChunk
	}
	for i >= 8 && bytes.Equal(a[i-8:i], b[i-8:i]) {
		i -= 8
	}
	return n - i
}

// Lost writes a count of samples the kernel dropped.
func (w *Writer) Lost(n uint64) error {
	w.begin(KindLost)
	w.u64(n)
	return w.end()
}

// Stats writes the summary.
func (w *Writer) Stats(s Stats) error {
	w.begin(KindStats)
	w.u64(s.Samples)
	w.u64(s.Lost)
	w.u64(s.FullStacks)
	w.u64(s.Throttles)
	w.u64(s.DurationNanos)
	w.u32(uint32(s.ExitCode))
	if err := w.end(); err != nil || s.Signal == 0 {
		return err
	}
	w.begin(KindStatus)
	w.u32(uint32(s.Signal))
	core := uint32(0)
	if s.CoreDumped {
		core = 1
	}
	w.u32(core)
	w.str(s.SignalName)
	return w.end()
}

// Blob writes a module image.
func (w *Writer) Blob(b Blob) error {
	w.begin(KindBlob)
	w.str(b.Name)
	w.bytes(b.Data)
	return w.end()
}

// Flush writes buffered data.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

// Recording is a whole recording in memory.
type Recording struct {
	Meta     Meta
	Mmaps    []Mmap
	Comms    []Comm
	Forks    []Task
	Exits    []Task
	Samples  []Sample
	Lost     uint64 // sum of the Lost records
	Stats    Stats
	HasStats bool
	Blobs    []Blob
	BuildIDs []BuildID
}

// ReadFile reads a whole recording; errors name the file.
func ReadFile(path string) (*Recording, error) {
	rec := &Recording{}
	err := ScanFile(path, func(v Entry) error {
		switch v := v.(type) {
		case Meta:
			rec.Meta = v
		case Mmap:
			rec.Mmaps = append(rec.Mmaps, v)
		case Comm:
			rec.Comms = append(rec.Comms, v)
		case Fork:
			rec.Forks = append(rec.Forks, Task(v))
		case Exit:
			rec.Exits = append(rec.Exits, Task(v))
		case *Sample:
			rec.Samples = append(rec.Samples, *v)
		case Lost:
			rec.Lost += uint64(v)
		case Stats:
			rec.Stats, rec.HasStats = v, true
		case Status:
			rec.Stats.Apply(v)
		case Blob:
			rec.Blobs = append(rec.Blobs, v)
		case BuildID:
			rec.BuildIDs = append(rec.BuildIDs, v)
		}
		return nil
	})
	return rec, err
}

// Fork, Exit and Lost are the values Scan passes for those kinds.
type (
	Fork Task
	Exit Task
	Lost uint64
)

// ScanFile calls f on each record of the file in order (see Scan);
// errors name the file.
func ScanFile(path string, f func(Entry) error) error {
	return scanFile(path, false, f)
}

// SkimFile is ScanFile without the samples: their bytes are skipped, not
// decoded or checked, for a reader that needs everything else (the
// mappings, threads and losses a report needs before its pass over the
// samples). No KernelFrames comes: bloop's recordings hold no kernel
// frames.
func SkimFile(path string, f func(Entry) error) error {
	return scanFile(path, true, f)
}

// scanFile is ScanFile, or SkimFile when skim is set.
func scanFile(path string, skim bool, f func(Entry) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	if err := scan(bufio.NewReaderSize(file, 1<<20), skim, f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ErrFormat reports a malformed recording.
var ErrFormat = errors.New("not a bloop recording or corrupt")

// Scan reads records from r and calls f with each: Meta, Mmap, Comm, Fork,
// Exit, *Sample, Lost, Stats or Blob. Records stream, so a recording
// larger than memory can be read. An error from f stops the scan.
func Scan(r io.Reader, f func(Entry) error) error {
	return scan(r, false, f)
}

// scan is Scan, with the samples skipped when skim is set.
func scan(r io.Reader, skim bool, f func(Entry) error) error {
	var hdr [12]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil || string(hdr[:8]) != Magic {
		return fmt.Errorf("%w: bad header", ErrFormat)
	}
	version := binary.LittleEndian.Uint32(hdr[8:])
	if version != 1 && version != Version {
		return fmt.Errorf("recording format version %d, this bloop reads versions 1 to %d", version, Version)
	}
	var rh [5]byte
	prev := map[uint32]*Sample{} // the last sample per thread, for shared stack tops
	for {
		if _, err := io.ReadFull(r, rh[:]); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("%w: truncated record header", ErrFormat)
		}
		n := binary.LittleEndian.Uint32(rh[1:])
		if n > 1<<30 {
			return fmt.Errorf("%w: record of %d bytes", ErrFormat, n)
		}
		if skim && (rh[0] == KindSample || rh[0] == KindSampleLR) {
			if err := discard(r, n); err != nil {
				return fmt.Errorf("%w: truncated record", ErrFormat)
			}
			continue
		}
		p, err := readN(r, n)
		if err != nil {
			return fmt.Errorf("%w: truncated record", ErrFormat)
		}
		d := &decoder{b: p}
		var v Entry
		switch rh[0] {
		case KindMeta:
			m := Meta{}
			for k := d.u32(); k > 0 && d.ok(); k-- {
				m.Command = append(m.Command, d.str())
			}
			m.Event, m.Freq, m.StackSize, m.StartNanos = d.str(), d.u32(), d.u32(), d.u64()
			v = m
		case KindMmap:
			v = Mmap{Pid: d.u32(), Tid: d.u32(), Time: d.u64(), Addr: d.u64(), Len: d.u64(),
				Pgoff: d.u64(), Prot: d.u32(), Flags: d.u32(), File: d.str()}
		case KindComm:
			v = Comm{Pid: d.u32(), Tid: d.u32(), Time: d.u64(), Name: d.str()}
		case KindFork, KindExit:
			t := Task{Pid: d.u32(), Ppid: d.u32(), Tid: d.u32(), Ptid: d.u32(), Time: d.u64()}
			if rh[0] == KindFork {
				v = Fork(t)
			} else {
				v = Exit(t)
			}
		case KindSample, KindSampleLR:
			s := &Sample{Pid: d.u32(), Tid: d.u32(), Time: d.u64(), IP: d.u64(), SP: d.u64(), BP: d.u64()}
			if version >= 2 {
				s.DI, s.HasDI = d.u64(), true
			}
			if rh[0] == KindSampleLR {
				s.LR, s.HasLR = d.u64(), true
			}
			s.StackSize = d.u32()
			shared := d.u32()
			s.Stack = d.bytes()
			if !d.ok() {
				break
			}
			p := prev[s.Tid]
			if shared > 0 {
				// The shared bytes [from, from+shared) must lie in the
				// previous sample's copy; offsets from its SP, so that
				// no sum wraps around 2^64.
				from := s.SP + uint64(len(s.Stack))
				if p == nil || from < s.SP || from < p.SP || from-p.SP > uint64(len(p.Stack)) ||
					uint64(shared) > uint64(len(p.Stack))-(from-p.SP) {
					return fmt.Errorf("%w: sample shares stack its thread's previous sample lacks", ErrFormat)
				}
				off := from - p.SP
				s.Stack = append(s.Stack, p.Stack[off:off+uint64(shared)]...)
			}
			prev[s.Tid] = s
			v = s
		case KindLost:
			v = Lost(d.u64())
		case KindStats:
			v = Stats{Samples: d.u64(), Lost: d.u64(), FullStacks: d.u64(), Throttles: d.u64(),
				DurationNanos: d.u64(), ExitCode: int32(d.u32())}
		case KindBlob:
			v = Blob{Name: d.str(), Data: d.bytes()}
		case KindStatus:
			v = Status{Signal: int32(d.u32()), CoreDumped: d.u32() != 0, SignalName: d.str()}
		case KindBuildID:
			v = BuildID{Path: d.str(), ID: bytes.Clone(d.bytes())}
		default:
			continue // a kind from a later version
		}
		if !d.ok() {
			return fmt.Errorf("%w: short record of kind %d", ErrFormat, rh[0])
		}
		if err := f(v); err != nil {
			return err
		}
	}
}

// discard skips n bytes, without copying them when r can (a
// bufio.Reader).
func discard(r io.Reader, n uint32) error {
	if d, ok := r.(interface{ Discard(int) (int, error) }); ok {
		_, err := d.Discard(int(n))
		return err
	}
	_, err := io.CopyN(io.Discard, r, int64(n))
	return err
}

// readN reads n bytes; a corrupt length cannot make it allocate more
// than the input holds (plus one chunk).
func readN(r io.Reader, n uint32) ([]byte, error) {
	if n <= 1<<20 {
		p := make([]byte, n)
		_, err := io.ReadFull(r, p)
		return p, err
	}
	var buf bytes.Buffer
	if _, err := io.CopyN(&buf, r, int64(n)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decoder reads fields from a payload, remembering overruns.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) ok() bool { return !d.bad }

func (d *decoder) take(n int) []byte {
	if d.bad || n < 0 || n > len(d.b) {
		d.bad = true
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) u32() uint32 {
	if b := d.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if b := d.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *decoder) bytes() []byte { return d.take(int(d.u32())) }
func (d *decoder) str() string   { return string(d.bytes()) }
