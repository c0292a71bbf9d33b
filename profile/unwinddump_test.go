package profile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/sample"
	"bloop/unwind"
)

// Debugging the unwinder on the states a loaded machine shows: with
// BLOOP_UNWIND_KEEP=dir, requireUnwound keeps a recording some of whose
// samples did not unwind; BLOOP_UNWIND_DUMP=recording (go test -run
// TestUnwindDump -v) prints each such sample: registers, the frames
// found, and the recipe and code at the frame where the walk stopped.

// keepRecording copies rec into $BLOOP_UNWIND_KEEP.
func keepRecording(t *testing.T, rec string) {
	dir := os.Getenv("BLOOP_UNWIND_KEEP")
	if dir == "" {
		return
	}
	in, err := os.Open(rec)
	if err != nil {
		t.Log(err)
		return
	}
	defer in.Close()
	out, err := os.CreateTemp(dir, strings.ReplaceAll(t.Name(), "/", "_")+"-*.rec")
	if err != nil {
		t.Log(err)
		return
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		t.Log(err)
	}
	t.Logf("kept %s", out.Name())
}

func TestUnwindDump(t *testing.T) {
	rec := os.Getenv("BLOOP_UNWIND_DUMP")
	if rec == "" {
		t.Skip("BLOOP_UNWIND_DUMP names no recording")
	}
	src, err := Open(rec)
	if err != nil {
		t.Fatal(err)
	}
	r := src.(*recording)
	p := newProfile(Options{Analyze: func(string) bool { return false }})
	p.sp = newSpaceFor(p.opt)
	defer p.sp.close()
	if err := r.prepare(p); err != nil {
		t.Fatal(err)
	}
	err = r.scan(r.path, func(e sample.Entry) error {
		if s, ok := e.(*sample.Sample); ok && !s.NoRegs {
			dumpSample(t, p.sp, s)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func dumpSample(t *testing.T, sp *space, s *sample.Sample) {
	st, look := stackOf(s), sp.lookupAt(s.Pid, s.Time)
	u := unwind.Unwind(st, look)
	if u.Out == unwind.Complete {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pid %d t %d out %d %q: ip %#x sp %#x bp %#x di %#x copy %d limit %d\n",
		s.Pid, s.Time, u.Out, u.Reason, s.IP, s.SP, s.BP, s.DI, len(s.Stack), s.StackSize)
	for i, pc := range u.PCs {
		m, addr, ok := sp.lookup(s.Pid, pc, s.Time)
		if !ok {
			fmt.Fprintf(&b, "  #%d %#x ?\n", i, pc)
			continue
		}
		name := ""
		if m.Unw != nil {
			if j := m.Unw.ProcAt(addr); j >= 0 {
				pr := m.Unw.Procs()[j]
				name = fmt.Sprintf("%s+%#x", pr.Name, addr-pr.Lo)
			}
		}
		rcp := "no recipe"
		if m.Unw != nil {
			if r, ok := m.Unw.RecipeAt(addr); ok {
				rcp = r.String()
			}
		}
		code := ""
		if m.Img != nil {
			code = fmt.Sprintf("% x", m.Img.Bytes(addr, addr+12))
		}
		fmt.Fprintf(&b, "  #%d %#x %s %#x %s | %s | %s\n", i, pc, filepath.Base(m.Path), addr, name, rcp, code)
	}
	// The first words of the copy, to see what a recipe would read.
	for a := 0; a+8 <= len(s.Stack) && a < 256; a += 8 {
		w := uint64(0)
		for k := 7; k >= 0; k-- {
			w = w<<8 | uint64(s.Stack[a+k])
		}
		where := ""
		if m, addr, ok := sp.lookup(s.Pid, w, s.Time); ok {
			where = fmt.Sprintf(" %s %#x", filepath.Base(m.Path), addr)
		}
		fmt.Fprintf(&b, "    sp+%#x: %#x%s\n", a, w, where)
	}
	t.Log(b.String())
}
