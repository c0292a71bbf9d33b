package loader

import (
	"encoding/binary"
	"fmt"

	"bloop/dwarfscan"
)

// readLinePrograms makes the line table of DWARF that is a .debug_line
// without a .debug_info: no unit points at the line programs, so each is
// read in turn from the section's start. nvcc -lineinfo writes such
// cubins, and hpcstruct gives them statements and procedure lines; from
// nvcc 11.2 on their programs also describe inlined calls, which make
// procedures with inline trees (lineInlines), as DWARF's records would.
func (img *Image) readLinePrograms(s dwarfscan.Sections, opt Options) error {
	d, err := dwarfscan.New(dwarfscan.Sections{Line: s.Line, Str: s.Str, LineStr: s.LineStr})
	if err != nil {
		return err
	}
	var real *realPaths
	if opt.RawFileNames {
		real = &realPaths{}
	}
	b := &lineBuilder{img: img, bad: &img.bad}
	for off := uint64(0); off+4 <= uint64(len(s.Line)); {
		size, hdr := uint64(binary.LittleEndian.Uint32(s.Line[off:])), uint64(4)
		if size == 0xffffffff {
			if off+12 > uint64(len(s.Line)) {
				break
			}
			size, hdr = binary.LittleEndian.Uint64(s.Line[off+4:]), 12
		}
		// A unit's address size is the image's: 8, as bloop reads 64-bit images.
		u := dwarfscan.Unit{StmtList: int64(off), AddrSize: 8}
		var lp *dwarfscan.LineProgram
		if real != nil {
			lp, err = d.RawLineProgram(&u)
		} else {
			lp, err = d.LineProgram(&u)
		}
		if err != nil {
			return fmt.Errorf("line program at %#x: %w", off, err)
		}
		joined := joinFiles(lp, "", real)
		b.add(lp, off, joined, "", real)
		files := &programFiles{lp: lp, joined: joined, real: real, bad: &img.bad, off: off}
		img.Procs = append(img.Procs, img.lineInlines(lp, off, files, s.Str, opt.DyninstLineSites)...)
		if size > uint64(len(s.Line))-off-hdr {
			break
		}
		off += hdr + size
	}
	b.sortRows()
	img.Lines = b.finish()
	return nil
}
