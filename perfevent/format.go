package perfevent

import (
	"fmt"
	"strings"
)

// Format renders a record on one line, with the fields its layout
// holds, for dumps and tests (as perf report -D does, in its own way).
func Format(r Record) string {
	var b strings.Builder
	h := r.Head()
	fmt.Fprintf(&b, "%s misc=%#x", typeName(h.Type), h.Misc)
	switch r := r.(type) {
	case *Sample:
		formatSample(&b, r)
	case *Mmap:
		fmt.Fprintf(&b, " pid=%d tid=%d addr=%#x len=%#x pgoff=%#x", r.Pid, r.Tid, r.Addr, r.Len, r.Pgoff)
		if r.Type == RecordMmap2 {
			if r.Misc&MiscMmapBuildID != 0 {
				fmt.Fprintf(&b, " buildid=%x", r.BuildID)
			} else {
				fmt.Fprintf(&b, " dev=%d:%d ino=%d gen=%d", r.Maj, r.Min, r.Ino, r.InoGen)
			}
			fmt.Fprintf(&b, " prot=%d flags=%#x", r.Prot, r.Flags)
		}
		fmt.Fprintf(&b, " file=%q", r.Filename)
		formatTrailer(&b, &r.Trailer)
	case *Comm:
		fmt.Fprintf(&b, " pid=%d tid=%d comm=%q", r.Pid, r.Tid, r.Comm)
		formatTrailer(&b, &r.Trailer)
	case *Task:
		fmt.Fprintf(&b, " pid=%d ppid=%d tid=%d ptid=%d time=%d", r.Pid, r.Ppid, r.Tid, r.Ptid, r.Time)
		formatTrailer(&b, &r.Trailer)
	case *Lost:
		fmt.Fprintf(&b, " id=%d lost=%d", r.ID, r.Lost)
		formatTrailer(&b, &r.Trailer)
	case *Throttle:
		fmt.Fprintf(&b, " time=%d id=%d stream=%d", r.Time, r.ID, r.StreamID)
		formatTrailer(&b, &r.Trailer)
	case *Unknown:
		fmt.Fprintf(&b, " body=%d bytes", len(r.Body))
	case *RawSample:
		fmt.Fprintf(&b, " body=%d bytes kernel frames=%v", len(r.Body), r.KernelFrames())
	}
	return b.String()
}

// formatTrailer renders the sample_id fields a record has.
func formatTrailer(b *strings.Builder, t *Trailer) {
	if t.Fields == 0 {
		return
	}
	b.WriteString(" |")
	if t.Fields&SampleTID != 0 {
		fmt.Fprintf(b, " pid=%d tid=%d", t.Pid, t.Tid)
	}
	if t.Fields&SampleTime != 0 {
		fmt.Fprintf(b, " time=%d", t.Time)
	}
	if t.Fields&(SampleID|SampleIdentifier) != 0 {
		fmt.Fprintf(b, " id=%d", t.ID)
	}
	if t.Fields&SampleStreamID != 0 {
		fmt.Fprintf(b, " stream=%d", t.StreamID)
	}
	if t.Fields&SampleCPU != 0 {
		fmt.Fprintf(b, " cpu=%d", t.CPU)
	}
}

// formatSample renders the fields of a sample its event selects.
func formatSample(b *strings.Builder, s *Sample) {
	st := s.Event.Attr.SampleType
	fmt.Fprintf(b, " event=%s", s.Event.Name)
	field := func(bit uint64, format string, args ...any) {
		if st&bit != 0 {
			fmt.Fprintf(b, " "+format, args...)
		}
	}
	field(SampleIdentifier|SampleID, "id=%d", s.ID)
	field(SampleIP, "ip=%#x", s.IP)
	field(SampleTID, "pid=%d tid=%d", s.Pid, s.Tid)
	field(SampleTime, "time=%d", s.Time)
	field(SampleAddr, "addr=%#x", s.Addr)
	field(SampleStreamID, "stream=%d", s.StreamID)
	field(SampleCPU, "cpu=%d", s.CPU)
	field(SamplePeriod, "period=%d", s.Period)
	field(SampleRead, "read=%d bytes", len(s.Read))
	field(SampleCallchain, "callchain=%s", formatCallchain(s.Callchain))
	field(SampleRaw, "raw=%x", s.Raw)
	field(SampleBranchStack, "branches=%d bytes", len(s.BranchStack))
	field(SampleRegsUser, "regs=%d%#x", s.RegsABI, s.Regs)
	field(SampleStackUser, "stack=%d/%d", len(s.Stack), s.StackSize)
	field(SampleWeight|SampleWeightStruct, "weight=%#x", s.Weight)
	field(SampleDataSrc, "datasrc=%#x", s.DataSrc)
	field(SampleTransaction, "txn=%#x", s.Transaction)
	field(SampleRegsIntr, "intr=%d%#x", s.IntrABI, s.IntrRegs)
	field(SamplePhysAddr, "phys=%#x", s.PhysAddr)
	field(SampleCgroup, "cgroup=%d", s.Cgroup)
	field(SampleDataPageSize, "datapage=%d", s.DataPageSize)
	field(SampleCodePageSize, "codepage=%d", s.CodePageSize)
	field(SampleAux, "aux=%x", s.Aux)
}

// formatCallchain renders a callchain with its context markers named.
func formatCallchain(chain []uint64) string {
	parts := make([]string, len(chain))
	for i, ip := range chain {
		parts[i] = fmt.Sprintf("%#x", ip)
		if name, ok := contextNames[ip]; ok {
			parts[i] = name
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

var contextNames = map[uint64]string{
	ContextHV: "hv:", ContextKernel: "kernel:", ContextUser: "user:",
	ContextGuest: "guest:", ContextGuestKernel: "guest-kernel:", ContextGuestUser: "guest-user:",
}
