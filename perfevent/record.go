package perfevent

// Record types of the kernel (PERF_RECORD_*).
const (
	RecordMmap         = 1
	RecordLost         = 2
	RecordComm         = 3
	RecordExit         = 4
	RecordThrottle     = 5
	RecordUnthrottle   = 6
	RecordFork         = 7
	RecordRead         = 8
	RecordSample       = 9
	RecordMmap2        = 10
	RecordAux          = 11
	RecordItraceStart  = 12
	RecordLostSamples  = 13
	RecordSwitch       = 14
	RecordSwitchCPU    = 15
	RecordNamespaces   = 16
	RecordKsymbol      = 17
	RecordBPFEvent     = 18
	RecordCgroup       = 19
	RecordTextPoke     = 20
	RecordAuxOutputHW  = 21
	RecordUserTypeBase = 64 // types from here on are perf's own, not the kernel's
)

// Record types perf itself writes in perf.data files and streams.
const (
	RecordHeaderAttr        = 64
	RecordHeaderEventType   = 65
	RecordHeaderTracingData = 66
	RecordHeaderBuildID     = 67
	RecordFinishedRound     = 68
	RecordIDIndex           = 69
	RecordAuxtraceInfo      = 70
	RecordAuxtrace          = 71
	RecordAuxtraceError     = 72
	RecordThreadMap         = 73
	RecordCPUMap            = 74
	RecordStatConfig        = 75
	RecordStat              = 76
	RecordStatRound         = 77
	RecordEventUpdate       = 78
	RecordTimeConv          = 79
	RecordHeaderFeature     = 80
	RecordCompressed        = 81
	RecordFinishedInit      = 82
	RecordCompressed2       = 83
)

// Bits of a record header's misc field.
const (
	MiscCPUModeMask  = 7
	MiscKernel       = 1
	MiscUser         = 2
	MiscHypervisor   = 3
	MiscGuestKernel  = 4
	MiscGuestUser    = 5
	MiscMmapData     = 1 << 13 // MMAP*: a data (not executable) mapping
	MiscCommExec     = 1 << 13 // COMM: the name changed by exec
	MiscMmapBuildID  = 1 << 14 // MMAP2: a build-id instead of device and inode
	MiscExactIP      = 1 << 14 // SAMPLE: the IP is the instruction that caused the event
	miscBuildIDSized = 1 << 15 // HEADER_BUILD_ID: the build-id's size is given
)

// Callchain context markers (PERF_CONTEXT_*): entries of a sample's
// callchain that are not addresses but say whose frames follow.
const (
	ContextHV          = ^uint64(32 - 1)   // -32
	ContextKernel      = ^uint64(128 - 1)  // -128
	ContextUser        = ^uint64(512 - 1)  // -512
	ContextGuest       = ^uint64(2048 - 1) // -2048
	ContextGuestKernel = ^uint64(2176 - 1) // -2176
	ContextGuestUser   = ^uint64(2560 - 1) // -2560
	ContextMax         = ^uint64(4095 - 1) // -4095: every marker is at least this
)

// IsContext reports whether a callchain entry is a context marker.
func IsContext(ip uint64) bool { return ip >= ContextMax }

// Header is the header every record starts with.
type Header struct {
	Type uint32
	Misc uint16
	Size uint16 // bytes of the record, header included
}

// Head returns the header; every Record has one.
func (h *Header) Head() Header { return *h }

// CPUMode is the misc field's processor mode (MiscKernel, MiscUser, ...).
func (h *Header) CPUMode() uint16 { return h.Misc & MiscCPUModeMask }

// A Record is a decoded record: *Sample, *Mmap, *Comm, *Task, *Lost,
// *Throttle or *Unknown. A Decoder reuses its records: one is valid, and
// its slices point into the bytes decoded, until the next Decode.
type Record interface {
	Head() Header
}

// Trailer holds the sample_id fields that end non-sample records when
// the event's attribute has sample_id_all; Fields says which were there
// (Sample* bits).
type Trailer struct {
	Fields   uint64
	Pid, Tid uint32
	Time     uint64
	ID       uint64
	StreamID uint64
	CPU      uint32
}

// Sample is a PERF_RECORD_SAMPLE. Fields its event's SampleType does not
// select are zero.
type Sample struct {
	Header
	Event        *Event // the event that took it
	ID           uint64 // SampleIdentifier or SampleID
	IP           uint64
	Pid, Tid     uint32
	Time         uint64
	Addr         uint64
	StreamID     uint64
	CPU          uint32
	Period       uint64
	Read         []byte   // the counter values (ReadFormat layout), undecoded
	Callchain    []uint64 // innermost first, with context markers (IsContext)
	Raw          []byte
	BranchStack  []byte // the branch records, undecoded
	RegsABI      uint64 // 0: no user registers (a kernel thread)
	Regs         []uint64
	StackSize    uint64 // bytes of user stack the record reserved
	Stack        []byte // the bytes copied, from the stack pointer up
	Weight       uint64 // SampleWeight, or SampleWeightStruct's packed word
	DataSrc      uint64
	Transaction  uint64
	IntrABI      uint64
	IntrRegs     []uint64
	PhysAddr     uint64
	Cgroup       uint64
	DataPageSize uint64
	CodePageSize uint64
	Aux          []byte
}

// Mmap is a PERF_RECORD_MMAP or PERF_RECORD_MMAP2 (Type says which): a
// mapping of a file into a process. MMAP2 records carry either the
// file's device and inode or (Misc&MiscMmapBuildID) its build-id.
type Mmap struct {
	Header
	Trailer
	Pid, Tid    uint32
	Addr, Len   uint64
	Pgoff       uint64
	Maj, Min    uint32
	Ino, InoGen uint64
	BuildID     []byte
	Prot, Flags uint32 // MMAP2 only
	Filename    string // the kernel's own mappings have pid -1 (0xffffffff)
}

// Comm is a PERF_RECORD_COMM: a thread's name; Misc&MiscCommExec when
// exec set it.
type Comm struct {
	Header
	Trailer
	Pid, Tid uint32
	Comm     string
}

// Task is a PERF_RECORD_FORK or PERF_RECORD_EXIT (Type says which).
type Task struct {
	Header
	Trailer
	Pid, Ppid uint32
	Tid, Ptid uint32
	Time      uint64
}

// Lost is a PERF_RECORD_LOST (records the kernel dropped, ID the event)
// or PERF_RECORD_LOST_SAMPLES (samples dropped; ID 0).
type Lost struct {
	Header
	Trailer
	ID   uint64
	Lost uint64
}

// Throttle is a PERF_RECORD_THROTTLE or PERF_RECORD_UNTHROTTLE.
type Throttle struct {
	Header
	Trailer
	Time     uint64
	ID       uint64
	StreamID uint64
}

// Unknown is a record of a type this package does not decode.
type Unknown struct {
	Header
	Body []byte // the record after its header
}
