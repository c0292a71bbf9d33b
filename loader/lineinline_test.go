package loader

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"bloop/dwarfscan"
)

// lineInlineCubin has no .debug_info; its line program, nvcc 12.0's, says
// that f4_inline is inlined into f4_2 and f4_1 and f_inlined into f2.
const lineInlineCubin = "inlines+loops-sm_90a-nvcc120-dr"

// TestLineInlines: the inlined calls of NVIDIA's line-program extension
// become procedures with inline trees, as DWARF records would: call site,
// callee name and the callee's code.
func TestLineInlines(t *testing.T) {
	readCubin(t, lineInlineCubin)
	for _, dyninst := range []bool{false, true} {
		img, err := Open(cubins+lineInlineCubin, Options{DyninstLineSites: dyninst})
		if err != nil {
			t.Fatal(err)
		}
		if len(img.Corrupt) > 0 {
			t.Errorf("corrupt: %+v", img.Corrupt)
		}
		want := map[string]int{"_Z4f4_2v": 60, "_Z4f4_1v": 54, "_Z2f2v": 19}
		for _, fn := range img.Funcs {
			sub := img.SubprogramAt(fn.Addr)
			line, ok := want[fn.Name]
			if !ok {
				if sub != nil {
					t.Errorf("%s: a procedure record, but nothing is inlined there", fn.Name)
				}
				continue
			}
			if sub == nil || len(sub.Inlines) != 1 {
				t.Fatalf("%s: %+v, want one inlined call", fn.Name, sub)
			}
			in := sub.Inlines[0]
			if in.CallLine != line || filepath.Base(in.CallFile) != "inlines+loops.cu" || !bytes.Contains([]byte(in.LinkName), []byte("inline")) {
				t.Errorf("%s: call at %s:%d of %s, want line %d", fn.Name, in.CallFile, in.CallLine, in.LinkName, line)
			}
			if len(in.Ranges) == 0 || in.Ranges[0].Lo <= fn.Addr || in.Ranges[len(in.Ranges)-1].Hi > fn.End {
				t.Errorf("%s [%#x, %#x): callee code %+v", fn.Name, fn.Addr, fn.End, in.Ranges)
			}
		}
	}
}

// nvPatch breaks the line program of lineInlineCubin, given the bytes of
// its .debug_line and the offset of its first DW_LNE_NVIDIA_inlined_call
// (00 03 90 context name).
type nvPatch func(line []byte, call int)

// TestCorruptInlinedCalls: damaged inline data of the line program is
// counted as CorruptInlinedCall at the program's start, and the rest of
// the image is read.
func TestCorruptInlinedCalls(t *testing.T) {
	b := readCubin(t, lineInlineCubin)
	sec := elfView(t, b).Section(".debug_line")
	call := bytes.Index(b[sec.Offset:sec.Offset+sec.Size], []byte{0, 3, 0x90, 4})
	if call < 0 {
		t.Fatal("no inlined call at row 4 in the line program")
	}
	tests := map[string]nvPatch{
		"context past the sequence": func(l []byte, at int) { l[at+3] = 0x7f },
		"context names its own row": func(l []byte, at int) { l[at+3] = 5 },
		"no operands": func(l []byte, at int) {
			l[at+1] = 1 // the operands become opcodes: set_file 65
		},
		"operand past the opcode": func(l []byte, at int) { l[at+1], l[at+3] = 2, 0x84 },
		"program ends inside it": func(l []byte, at int) {
			binary.LittleEndian.PutUint32(l, uint32(at+3-4))
		},
		"names outside .debug_str": func(l []byte, at int) {
			hdrEnd := 10 + int(binary.LittleEndian.Uint32(l[6:]))
			binary.LittleEndian.PutUint32(l[hdrEnd-4:], 0x7fffff00) // the function-name base
		},
	}
	for name, patch := range tests {
		t.Run(name, func(t *testing.T) {
			c := bytes.Clone(b)
			patch(c[sec.Offset:sec.Offset+sec.Size], call)
			path := filepath.Join(t.TempDir(), lineInlineCubin)
			if err := os.WriteFile(path, c, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, workers := range []int{1, 2} {
				img := openWorkers(t, path, workers)
				x, ok := findCorrupt(img, CorruptInlinedCall, ".debug_line")
				switch {
				case !ok:
					t.Errorf("-j%d: no %q in .debug_line among %+v", workers, CorruptInlinedCall, img.Corrupt)
				case x.Offset != 0 || x.Count < 1:
					t.Errorf("-j%d: %+v, want the first at .debug_line+0", workers, x)
				}
				if len(img.Funcs) != 7 {
					t.Errorf("-j%d: %d procedures, want the 7 kernels", workers, len(img.Funcs))
				}
			}
		})
	}
}

// TestLineInlineDepth: a chain of inlined calls deeper than any compiler
// writes (each row's code inlined at the row before) is cut at
// maxLineInlineDepth and counted, not followed into a scope tree as deep
// as the program is long.
func TestLineInlineDepth(t *testing.T) {
	img := FromSections(CUDA, []*Section{{Name: ".text.k", Addr: 0x1000, Data: make([]byte, 0x4000)}}, nil)
	n := maxLineInlineDepth + 100
	seq := []dwarfscan.LineRow{{Address: 0x1000, File: 1, Line: 1}}
	for i := 1; i <= n; i++ {
		seq = append(seq, dwarfscan.LineRow{Address: 0x1000 + uint64(16*i), File: 1, Line: 2, Context: uint64(i)})
	}
	seq = append(seq, dwarfscan.LineRow{Address: 0x1000 + uint64(16*(n+1)), EndSequence: true})
	var bad tally
	r := &seqReader{img: img, files: &programFiles{joined: []string{"", "k.cu"}, bad: &bad}, str: []byte("k\x00"), bad: &bad, callees: map[uint64]*Callee{}}
	sp := r.sequence(seq)
	depth := 0
	for ins := sp.Inlines; len(ins) > 0; ins = ins[0].Children {
		depth++
	}
	if depth != maxLineInlineDepth {
		t.Errorf("depth %d, want %d", depth, maxLineInlineDepth)
	}
	if len(bad) != 1 || bad[0].Kind != CorruptInlinedCall || bad[0].Count != n-maxLineInlineDepth {
		t.Errorf("corrupt %+v, want %d places of %q", bad, n-maxLineInlineDepth, CorruptInlinedCall)
	}
}
