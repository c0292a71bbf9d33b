package scopes

import "bloop/loader"

// procScan is how many instructions from its entry a procedure's line is
// looked for in (hpcstruct's CUDA_PROC_SEARCH_LEN).
const procScan = 32

// scanProcLine is the line and file of a procedure of fixed-width
// instructions (a cubin's kernel) as hpcstruct finds them: the file of the
// first of its first procScan instructions that has a line, and the
// smallest line of that file among them; else the first line found further
// on. nvcc often gives a kernel's first instructions no line, or the line
// of code inlined into them, so the entry's own row would often say
// nothing. No line: 0 and "".
func scanProcLine(img *loader.Image, fn *loader.Func) (line int, file string) {
	w := img.InstSize
	a := fn.Addr
	for ; a < fn.End && a-fn.Addr < procScan*w; a += w {
		r, ok := img.Lines.Lookup(a)
		switch {
		case !ok || r.File == "":
		case file == "":
			line, file = r.Line, r.File
		case r.File == file && r.Line < line:
			line = r.Line
		}
	}
	for ; file == "" && a < fn.End; a += w {
		if r, ok := img.Lines.Lookup(a); ok && r.File != "" {
			line, file = r.Line, r.File
		}
	}
	return line, file
}
