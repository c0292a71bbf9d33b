package rectest

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"bloop/perfevent"
)

// PerfMmap is an executable mapping of a hand-made perf.data file.
type PerfMmap struct {
	Pid              uint32
	Addr, Len, Pgoff uint64
	File             string
}

// PerfSample is a sample of a hand-made perf.data file as perf record
// --call-graph dwarf writes it: the user registers of the file's mask, in
// ascending register number, and the stack copy from SP up.
type PerfSample struct {
	Pid, Tid  uint32
	Time, IP  uint64
	Regs      []uint64
	Stack     []byte
	StackSize uint64 // bytes requested (at least len(Stack))
}

// PerfData writes a perf.data file of one cpu-clock event sampling user
// registers regMask and the user stack, recorded on a machine perf calls
// arch (HEADER_ARCH: x86_64, aarch64, ppc64le), with the mappings and
// samples given, as the files perf writes are laid out (perf's
// tools/perf/Documentation/perf.data-file-format.txt; the layout is
// perfevent's).
func PerfData(t testing.TB, arch string, regMask uint64, mmaps []PerfMmap, samples []PerfSample) string {
	t.Helper()
	le := binary.LittleEndian
	attr := perfevent.Attr{Type: perfevent.TypeSoftware, Size: perfevent.AttrSizeVer8, SamplePeriod: 1000000,
		SampleType:     perfevent.SampleIP | perfevent.SampleTID | perfevent.SampleTime | perfevent.SamplePeriod | perfevent.SampleRegsUser | perfevent.SampleStackUser,
		SampleRegsUser: regMask, SampleStackUser: 8192}
	rec := func(typ uint32, body []byte) []byte {
		b := le.AppendUint32(nil, typ)
		b = le.AppendUint16(b, perfevent.MiscUser)
		b = le.AppendUint16(b, uint16(8+len(body)))
		return append(b, body...)
	}
	str := func(b []byte, s string) []byte { // NUL-padded to 8 bytes, as the kernel writes names
		return append(append(b, s...), make([]byte, 8-len(s)%8)...)
	}
	var data []byte
	for _, m := range mmaps {
		b := le.AppendUint32(le.AppendUint32(nil, m.Pid), m.Pid)
		b = le.AppendUint64(le.AppendUint64(le.AppendUint64(b, m.Addr), m.Len), m.Pgoff)
		b = le.AppendUint32(le.AppendUint32(b, 8), 1) // device
		b = le.AppendUint64(le.AppendUint64(b, 1), 0) // inode, generation
		b = le.AppendUint32(le.AppendUint32(b, 5), 2) // PROT_READ|PROT_EXEC, MAP_PRIVATE
		data = append(data, rec(perfevent.RecordMmap2, str(b, m.File))...)
	}
	for _, s := range samples {
		b := le.AppendUint64(nil, s.IP)
		b = le.AppendUint32(le.AppendUint32(b, s.Pid), s.Tid)
		b = le.AppendUint64(le.AppendUint64(b, s.Time), 1000000)
		b = le.AppendUint64(b, 2) // PERF_SAMPLE_REGS_ABI_64
		for _, r := range s.Regs {
			b = le.AppendUint64(b, r)
		}
		size := max(s.StackSize, (uint64(len(s.Stack))+7)&^7)
		b = le.AppendUint64(b, size)
		b = append(append(b, s.Stack...), make([]byte, size-uint64(len(s.Stack)))...)
		b = le.AppendUint64(b, uint64(len(s.Stack)))
		data = append(data, rec(perfevent.RecordSample, b)...)
	}
	out := perfevent.LayoutFile([]*perfevent.Event{{Attr: attr}}, data, map[int][]byte{
		perfevent.FeatArch:    perfevent.HeaderString(arch),
		perfevent.FeatCmdline: perfevent.CmdlineFeature("perf", "record"),
	})
	path := filepath.Join(t.TempDir(), "perf.data")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
