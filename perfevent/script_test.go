package perfevent

import (
	"bufio"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The records of a file are compared with perf script's rendering of the
// same file, as sorted lists of lines in one normal form (perf script
// prints in time order, Records in file order):
//
//	S pid/tid time period event ips...   a sample: its IP, or its callchain without context markers
//	                                     (as perf script prints them: offsets in the mapped file)
//	M pid/tid addr len pgoff file        a mapping (MMAP or MMAP2)
//	C pid/tid comm [exec]                a thread's name
//	F pid:tid ppid:ptid                  a fork (X: an exit)
//
// perf script is run with -F event,pid,tid,ip,period,time
// --show-mmap-events --show-task-events, and -G unless callchains are
// compared.
var scriptArgs = []string{"-F", "event,pid,tid,ip,period,time", "--show-mmap-events", "--show-task-events"}

// scriptTime renders a time in ns as perf script does: seconds and
// microseconds.
func scriptTime(ns uint64) string { return fmt.Sprintf("%d.%06d", ns/1e9, ns%1e9/1e3) }

// readerLines renders a file's records in the normal form, and counts
// the samples of each event.
func readerLines(t *testing.T, f *File, callchains bool) ([]string, map[string]int) {
	t.Helper()
	var lines []string
	counts := map[string]int{}
	maps := mappings(t, f)
	err := f.Records(func(r Record) error {
		switch r := r.(type) {
		case *Sample:
			counts[r.Event.Name]++
			line := fmt.Sprintf("S %d/%d %s %d %s", r.Pid, r.Tid, scriptTime(r.Time), r.Period, r.Event.Name)
			if callchains {
				for _, ip := range r.Callchain {
					if !IsContext(ip) {
						line += fmt.Sprintf(" %x", maps.fileOffset(r.Pid, ip))
					}
				}
			} else {
				line += fmt.Sprintf(" %x", r.IP)
			}
			lines = append(lines, line)
		case *Mmap:
			lines = append(lines, fmt.Sprintf("M %d/%d %x %x %x %s", int32(r.Pid), int32(r.Tid), r.Addr, r.Len, r.Pgoff, r.Filename))
		case *Comm:
			line := fmt.Sprintf("C %d/%d %s", r.Pid, r.Tid, r.Comm)
			if r.Misc&MiscCommExec != 0 {
				line += " exec"
			}
			lines = append(lines, line)
		case *Task:
			kind := "F"
			if r.Type == RecordExit {
				kind = "X"
			}
			lines = append(lines, fmt.Sprintf("%s %d:%d %d:%d", kind, r.Pid, r.Tid, r.Ppid, r.Ptid))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return lines, counts
}

// mapping is one MMAP or MMAP2 record's mapping.
type mapping struct {
	pid              int32
	addr, len, pgoff uint64
}

type mapList []mapping

// mappings lists a file's mappings.
func mappings(t *testing.T, f *File) mapList {
	var maps mapList
	if err := f.Records(func(r Record) error {
		if m, ok := r.(*Mmap); ok {
			maps = append(maps, mapping{int32(m.Pid), m.Addr, m.Len, m.Pgoff})
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return maps
}

// fileOffset turns an address of a process (or of the kernel, pid -1)
// into its offset in the file mapped there, as perf script prints
// callchains; addresses in no mapping stay as they are.
func (maps mapList) fileOffset(pid uint32, ip uint64) uint64 {
	for i := len(maps) - 1; i >= 0; i-- {
		m := maps[i]
		if (m.pid == int32(pid) || m.pid == -1) && ip >= m.addr && ip-m.addr < m.len {
			return ip - m.addr + m.pgoff
		}
	}
	return ip
}

var (
	scriptSample = regexp.MustCompile(`^\s*(\d+)/(\d+)\s+(\d+\.\d+):\s+(\d+)\s+(\S+):\s*([0-9a-f]*)\s*$`)
	scriptMmap   = regexp.MustCompile(`PERF_RECORD_MMAP2? (-?\d+)/(\d+): \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (?:0x)?([0-9a-f]+)[^\]]*\]: \S+ (.*)$`)
	scriptComm   = regexp.MustCompile(`PERF_RECORD_COMM( exec)?: (.*):(\d+)/(\d+)$`)
	scriptTask   = regexp.MustCompile(`PERF_RECORD_(FORK|EXIT)\((\d+):(\d+)\):\((\d+):(\d+)\)`)
	scriptChain  = regexp.MustCompile(`^\t\s*([0-9a-f]+)(?: .*)?$`) // perf script adds symbols to streams
)

// parseScript reads perf script's output into the normal form, and
// counts the samples of each event.
func parseScript(out string) ([]string, map[string]int, error) {
	var lines []string
	counts := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	sample := -1 // the sample whose callchain lines follow
	for sc.Scan() {
		l := sc.Text()
		if m := scriptChain.FindStringSubmatch(l); m != nil && sample >= 0 {
			lines[sample] += " " + m[1]
			continue
		}
		sample = -1
		switch {
		case strings.TrimSpace(l) == "":
		case strings.Contains(l, "PERF_RECORD_"):
			line, err := scriptRecordLine(l)
			if err != nil {
				return nil, nil, err
			}
			lines = append(lines, line)
		default:
			m := scriptSample.FindStringSubmatch(l)
			if m == nil {
				return nil, nil, fmt.Errorf("perf script line not understood: %q", l)
			}
			counts[m[5]]++
			line := fmt.Sprintf("S %s/%s %s %s %s", m[1], m[2], m[3], m[4], m[5])
			if m[6] != "" {
				line += " " + m[6]
			}
			lines = append(lines, line)
			sample = len(lines) - 1
		}
	}
	slices.Sort(lines)
	return lines, counts, sc.Err()
}

// scriptRecordLine reads perf script's line of a mapping, a comm, a
// fork or an exit.
func scriptRecordLine(l string) (string, error) {
	if m := scriptMmap.FindStringSubmatch(l); m != nil {
		return fmt.Sprintf("M %s/%s %s %s %s %s", m[1], m[2], m[3], m[4], m[5], m[6]), nil
	}
	if m := scriptComm.FindStringSubmatch(l); m != nil {
		line := fmt.Sprintf("C %s/%s %s", m[3], m[4], m[2])
		if m[1] != "" {
			line += " exec"
		}
		return line, nil
	}
	if m := scriptTask.FindStringSubmatch(l); m != nil {
		kind := map[string]string{"FORK": "F", "EXIT": "X"}[m[1]]
		return fmt.Sprintf("%s %s:%s %s:%s", kind, m[2], m[3], m[4], m[5]), nil
	}
	return "", fmt.Errorf("perf script line not understood: %q", l)
}

// compareLines reports the first differences of two sorted lists.
func compareLines(t *testing.T, name string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	shown := 0
	for i := 0; i < max(len(got), len(want)) && shown < 10; i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("%s line %d:\n got  %s\n want %s", name, i, g, w)
			shown++
		}
	}
	t.Errorf("%s: %d lines read, perf script has %d", name, len(got), len(want))
}
