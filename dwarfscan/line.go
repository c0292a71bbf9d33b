package dwarfscan

import (
	"fmt"
	"io"
	"path"
	"strings"
)

// LineRow is one row of a line table.
type LineRow struct {
	Address uint64
	// File indexes LineProgram.Files() as it is when the row is returned;
	// an index outside it means no file (debug/dwarf's nil LineFile).
	File        int
	Line        int
	IsStmt      bool
	EndSequence bool
	// Context and FuncName are NVIDIA's inline registers (linenv.go): the
	// 1-based row, in this row's sequence, of the call site whose inlined
	// code this row is (0: none), and the callee's name as an offset into
	// .debug_str from FuncNameBase.
	Context, FuncName uint64
}

// LineProgram runs the line number program of one unit. It is a cursor:
// use one per goroutine.
type LineProgram struct {
	sec      []byte // .debug_line cut at the program's end
	pos      int
	start    int // first opcode
	version  int
	addrSize int
	minInst  int
	maxOps   int
	lineBase int
	lnRange  int
	opBase   int
	opLens   []byte // lengths of standard opcodes 1..opBase-1
	defStmt  bool
	dirs     []string
	dirClean []bool // dirs[i] needs no cleaning when joined (see joinFast)
	files    []string
	nfiles   int  // files in the header
	file0Abs bool // DWARF 5: entry 0's path is absolute as written (File0Absolute)
	raw      bool // names spelled as libdw does (RawLineProgram)
	err      error
	// NVIDIA's function-name base (linenv.go), when the header holds one.
	nvBase    uint64
	hasNVBase bool
	// special[op] is what special opcode op does, worked out once: the
	// divisions per row were a good part of the time.
	special [256]struct{ ops, line int32 }

	// State machine registers.
	addr     uint64
	opIndex  int
	file     int
	line     int
	isStmt   bool
	context  uint64 // NVIDIA's (linenv.go)
	funcName uint64
}

// Standard opcodes whose operand count is fixed by the spec; a header
// that says otherwise is rejected, as debug/dwarf does (DW_LNS_set_column
// and DW_LNS_fixed_advance_pc are not checked there either).
var knownOpLens = [13]int8{-1, 0, 1, 1, 1, -1, 0, 0, 0, -1, 0, 0, 1}

// LineProgram returns the line program of unit u, positioned at its first
// row. It returns nil, nil when u has no DW_AT_stmt_list or there is no
// .debug_line. Beyond debug/dwarf, DWARF 5 file and directory names in
// DW_FORM_strx* are resolved (debug/dwarf leaves them empty), and a form
// it cannot decode there is an error (debug/dwarf skips no bytes for it).
func (d *Data) LineProgram(u *Unit) (*LineProgram, error) {
	return d.lineProgram(u, false)
}

// RawLineProgram is LineProgram with the file names spelled as elfutils'
// libdw spells them (dwarf_filesrc), which tools built on it (Dyninst,
// hence HPCToolkit) show: nothing is cleaned, a relative name is its
// directory entry, "/" and the name, and the directory entries are taken
// as they are, so a DWARF 2-4 include directory is not joined with
// DW_AT_comp_dir (entry 0 is DW_AT_comp_dir itself) and a name may stay
// relative. An absolute name is used as it is.
func (d *Data) RawLineProgram(u *Unit) (*LineProgram, error) {
	return d.lineProgram(u, true)
}

func (d *Data) lineProgram(u *Unit, raw bool) (*LineProgram, error) {
	if u.StmtList < 0 || d.s.Line == nil {
		return nil, nil
	}
	if u.StmtList > int64(len(d.s.Line)) {
		return nil, decodeErr(".debug_line", 0, fmt.Errorf("%w: DW_AT_stmt_list %#x of unit at %#x", ErrBadOffset, u.StmtList, u.Offset))
	}
	b := buf{data: d.s.Line, pos: int(u.StmtList), sec: ".debug_line"}
	hdr := b.pos
	length, dwarf64 := b.unitLength()
	end := b.end(length)
	if b.err != nil {
		return nil, b.err
	}
	b.data = b.data[:end]
	p := &LineProgram{sec: b.data, raw: raw}
	p.version = int(b.fixed(2))
	if b.err == nil && (p.version < 2 || p.version > 5) {
		return nil, decodeErr(".debug_line", hdr, fmt.Errorf("%w: line table version %d", ErrBadVersion, p.version))
	}
	offSize := 4
	if dwarf64 {
		offSize = 8
	}
	p.addrSize = u.AddrSize
	if p.version >= 5 {
		p.addrSize = int(b.u8())
		b.u8() // segment selector size
	}
	p.start = b.end(b.fixed(offSize))
	p.minInst = int(b.u8())
	p.maxOps = 1
	if p.version >= 4 {
		p.maxOps = int(b.u8())
	}
	p.defStmt = b.u8() != 0
	p.lineBase = int(int8(b.u8()))
	p.lnRange = int(b.u8())
	p.opBase = int(b.u8())
	if b.err != nil {
		return nil, b.err
	}
	if p.maxOps == 0 || p.lnRange == 0 {
		return nil, decodeErr(".debug_line", hdr, fmt.Errorf("%w: maximum_operations_per_instruction %d, line_range %d", ErrMalformed, p.maxOps, p.lnRange))
	}
	if p.opBase > 0 {
		p.opLens = b.bytes(uint64(p.opBase - 1))
	}
	for i, n := range p.opLens {
		if op := i + 1; op < len(knownOpLens) && knownOpLens[op] >= 0 && int(n) != int(knownOpLens[op]) {
			return nil, decodeErr(".debug_line", hdr, fmt.Errorf("%w: standard opcode %d has %d operands", ErrMalformed, op, n))
		}
	}
	if p.version < 5 {
		p.dirs = append(p.dirs, u.CompDir)
		for b.err == nil {
			dir := b.cstr(false)
			if dir == "" {
				break
			}
			if !raw && !isAbs(dir) {
				dir = joinPath(u.CompDir, dir)
			}
			p.dirs = append(p.dirs, keep(dir))
		}
		p.dirClean = cleanDirs(p.dirs)
		p.files = append(p.files, "") // file 0 means "no file" before DWARF 5
		for b.err == nil {
			if !p.fileEntry(&b) {
				break
			}
		}
	} else {
		p.dirs, _ = d.entryTable(&b, u, offSize, nil, nil, raw)
		p.dirClean = cleanDirs(p.dirs)
		p.files, p.file0Abs = d.entryTable(&b, u, offSize, p.dirs, p.dirClean, raw)
	}
	if b.err != nil {
		return nil, b.err
	}
	p.readNVBase(&b)
	p.nfiles = len(p.files)
	for op := max(p.opBase, 0); op < 256; op++ {
		adj := op - p.opBase
		p.special[op].ops = int32(adj / p.lnRange)
		p.special[op].line = int32(p.lineBase + adj%p.lnRange)
	}
	p.Reset()
	return p, nil
}

// keep copies s, which may point into .debug_line: only .debug_str and
// .debug_line_str strings are handed out uncopied.
func keep(s string) string { return strings.Clone(s) }

// fileEntry reads a DWARF 2-4 file entry (header or DW_LNE_define_file)
// and appends it to the file table; it returns false at the empty name
// that ends the header's list.
func (p *LineProgram) fileEntry(b *buf) bool {
	name := b.cstr(false)
	if name == "" {
		return false
	}
	at := b.pos
	dir := b.uleb()
	if p.raw && !strings.HasPrefix(name, "/") || !p.raw && !isAbs(name) {
		if dir >= uint64(len(p.dirs)) {
			b.pos = at
			b.fail(fmt.Errorf("%w: directory index %d of %d", ErrMalformed, dir, len(p.dirs)))
			return false
		}
		if p.raw {
			name = rawJoin(p.dirs[dir], name)
		} else {
			name = joinFast(p.dirs[dir], p.dirClean[dir], name)
		}
	}
	b.uleb() // mtime
	b.uleb() // length
	if b.err != nil {
		return false
	}
	p.files = append(p.files, keep(name))
	return true
}

// DW_LNCT content types.
const (
	lnctPath     = 1
	lnctDirIndex = 2
)

// entryTable reads a DWARF 5 directory table (dirs == nil) or file table.
func (d *Data) entryTable(b *buf, u *Unit, offSize int, dirs []string, dirClean []bool, raw bool) (out []string, firstAbs bool) {
	type pair struct{ content, form uint64 }
	nfmt := int(b.u8())
	formats := make([]pair, 0, nfmt)
	for i := 0; i < nfmt && b.err == nil; i++ {
		formats = append(formats, pair{b.uleb(), b.uleb()})
	}
	at := b.pos
	n := b.uleb()
	if b.err != nil {
		return nil, false
	}
	// Every form takes at least one byte, so n is bounded by what is left.
	if n > 0 && (nfmt == 0 || n > uint64(len(b.data)-b.pos)) {
		b.pos = at
		b.fail(fmt.Errorf("%w: %d entries with %d formats in %d bytes", ErrMalformed, n, nfmt, len(b.data)-b.pos))
		return nil, false
	}
	out = make([]string, 0, n)
	for ; n > 0 && b.err == nil; n-- {
		var name, dir string
		clean := false
		for _, f := range formats {
			at := b.pos
			var s string
			var v uint64
			switch Form(f.form) {
			case FormString:
				s = keep(b.cstr(false))
			case FormLineStrp, FormStrp:
				off := b.fixed(offSize)
				sec := d.s.LineStr
				if Form(f.form) == FormStrp {
					sec = d.s.Str
				}
				var ok bool
				if s, ok = cstr(sec, off); !ok && b.err == nil {
					b.pos = at
					b.fail(fmt.Errorf("%w: string offset %#x", ErrBadOffset, off))
				}
			case FormStrx, FormStrx1, FormStrx2, FormStrx3, FormStrx4:
				var i uint64
				switch Form(f.form) {
				case FormStrx:
					i = b.uleb()
				case FormStrx1:
					i = b.fixed(1)
				case FormStrx2:
					i = b.fixed(2)
				case FormStrx3:
					i = b.fixed(3)
				default:
					i = b.fixed(4)
				}
				if b.err == nil {
					var err error
					if s, err = d.strx(u, i); err != nil {
						b.pos = at
						b.fail(err)
					}
				}
			case FormUdata:
				v = b.uleb()
			case FormData1:
				v = b.fixed(1)
			case FormData2:
				v = b.fixed(2)
			case FormData4:
				v = b.fixed(4)
			case FormData8:
				v = b.fixed(8)
			case FormData16:
				b.bytes(16)
			case FormBlock:
				b.bytes(b.uleb())
			default:
				b.fail(fmt.Errorf("%w %#x in a line table entry format", ErrUnknownForm, f.form))
			}
			switch f.content {
			case lnctPath:
				name = s
			case lnctDirIndex:
				if dirs != nil && b.err == nil {
					if v >= uint64(len(dirs)) {
						b.pos = at
						b.fail(fmt.Errorf("%w: directory index %d of %d", ErrMalformed, v, len(dirs)))
						break
					}
					dir, clean = dirs[v], dirClean[v]
				}
			}
		}
		if len(out) == 0 {
			firstAbs = strings.HasPrefix(name, "/")
		}
		if raw {
			if dirs != nil && !strings.HasPrefix(name, "/") {
				name = rawJoin(dir, name)
			}
		} else if dir != "" && name != "" {
			// As debug/dwarf: join whenever both are set, even for an
			// absolute name.
			name = joinFast(dir, clean, name)
		}
		out = append(out, name)
	}
	return out, firstAbs
}

// File0Absolute reports whether a DWARF 5 table's entry 0, the primary
// source file, is written as an absolute path rather than relative to a
// directory entry: clang's, for a source named by an absolute path.
func (p *LineProgram) File0Absolute() bool { return p.file0Abs }

// Files returns the file name table as of the current position: entry i
// is the file that DW_AT_decl_file/DW_AT_call_file value i and
// LineRow.File i name. Before DWARF 5 entry 0 is "". DW_LNE_define_file
// appends to it. The slice must not be modified.
func (p *LineProgram) Files() []string { return p.files }

// Reset moves p back to its first row.
func (p *LineProgram) Reset() {
	p.pos = p.start
	p.err = nil
	// Capped, so that define_file appends to a new array: slices that
	// Files returned earlier stay as they were.
	p.files = p.files[:p.nfiles:p.nfiles]
	p.resetRegs()
}

func (p *LineProgram) resetRegs() {
	p.addr, p.opIndex, p.file, p.line, p.isStmt = 0, 0, 1, 1, p.defStmt
	p.context, p.funcName = 0, 0
}

func (p *LineProgram) fail(pos int, err error) error {
	p.err = decodeErr(".debug_line", pos, err)
	return p.err
}

// Next sets *row to the next row. It returns io.EOF at the end.
func (p *LineProgram) Next(row *LineRow) error {
	if p.err != nil {
		return p.err
	}
	b := p.sec
	pos := p.pos
	// The registers live in locals (no closures over them, which would
	// keep them in memory) while the loop runs.
	addr, opIndex, line, file, isStmt := p.addr, p.opIndex, p.line, p.file, p.isStmt
	opBase := p.opBase
	for pos < len(b) {
		op := int(b[pos])
		pos++
		if op >= opBase {
			sp := &p.special[op]
			addr, opIndex = p.advance(addr, opIndex, int(sp.ops))
			line += int(sp.line)
			*row = LineRow{Address: addr, File: file, Line: line, IsStmt: isStmt, Context: p.context, FuncName: p.funcName}
			p.pos, p.addr, p.opIndex, p.line, p.file, p.isStmt = pos, addr, opIndex, line, file, isStmt
			return nil
		}
		var v uint64
		var ok bool
		// The commonest standard opcodes, with one-byte operands, are
		// tested before the jump table: ~15% fewer cycles per row on
		// libjvm (its indirect jump mispredicts often).
		if op == 5 { // DW_LNS_set_column
			if pos < len(b) && b[pos] < 0x80 {
				pos++
				continue
			}
		} else if op == 3 { // DW_LNS_advance_line
			if pos < len(b) && b[pos] < 0x80 {
				line += int(int8(b[pos]<<1) >> 1)
				pos++
				continue
			}
		} else if op == 1 { // DW_LNS_copy
			*row = LineRow{Address: addr, File: file, Line: line, IsStmt: isStmt, Context: p.context, FuncName: p.funcName}
			p.pos, p.addr, p.opIndex, p.line, p.file, p.isStmt = pos, addr, opIndex, line, file, isStmt
			return nil
		}
		switch op {
		case 0: // extended opcode
			at := pos - 1
			n, next, ok := uleb(b, pos)
			if !ok || next >= len(b) || n > uint64(len(b)-next) {
				return p.fail(at, truncatedExtended(b, next, ok))
			}
			end := next + int(n)
			sub := b[next]
			pos = next + 1
			switch sub {
			case 1: // DW_LNE_end_sequence
				*row = LineRow{Address: addr, File: file, Line: line, IsStmt: isStmt, EndSequence: true, Context: p.context, FuncName: p.funcName}
				addr, opIndex, line, file, isStmt = 0, 0, 1, 1, p.defStmt
				p.context, p.funcName = 0, 0
			case 2: // DW_LNE_set_address
				if !addrSizeOK(p.addrSize) {
					return p.fail(at, fmt.Errorf("%w: %d", ErrAddressSize, p.addrSize))
				}
				if addr, ok = fixed(b, pos, p.addrSize); !ok {
					return p.fail(at, ErrTruncated)
				}
				pos += p.addrSize
			case 3: // DW_LNE_define_file
				fb := buf{data: b[:end], pos: pos, sec: ".debug_line"}
				if !p.fileEntry(&fb) {
					if fb.err != nil {
						p.err = fb.err
						return p.err
					}
					return p.fail(at, fmt.Errorf("%w: DW_LNE_define_file without a name", ErrMalformed))
				}
				pos = fb.pos
			default:
				if _, err := nvidiaOp(b, sub, pos, end, &p.context, &p.funcName); err != nil {
					return p.fail(at, err)
				}
			}
			if end < pos {
				return p.fail(at, fmt.Errorf("%w: extended opcode %d longer than its length %d", ErrMalformed, sub, n))
			}
			pos = end
			if sub == 1 {
				p.pos, p.addr, p.opIndex, p.line, p.file, p.isStmt = pos, addr, opIndex, line, file, isStmt
				return nil
			}
			continue
		case 1: // DW_LNS_copy
			*row = LineRow{Address: addr, File: file, Line: line, IsStmt: isStmt, Context: p.context, FuncName: p.funcName}
			p.pos, p.addr, p.opIndex, p.line, p.file, p.isStmt = pos, addr, opIndex, line, file, isStmt
			return nil
		case 2: // DW_LNS_advance_pc
			if v, pos, ok = uleb(b, pos); !ok {
				return p.fail(pos, ErrTruncated)
			}
			addr, opIndex = p.advance(addr, opIndex, int(v))
		case 3: // DW_LNS_advance_line
			var s int64
			if s, pos, ok = sleb(b, pos); !ok {
				return p.fail(pos, ErrTruncated)
			}
			line += int(s)
		case 4: // DW_LNS_set_file
			if v, pos, ok = uleb(b, pos); !ok {
				return p.fail(pos, ErrTruncated)
			}
			file = int(v)
		case 5, 12: // DW_LNS_set_column, DW_LNS_set_isa: one operand, not kept
			if _, pos, ok = uleb(b, pos); !ok {
				return p.fail(pos, ErrTruncated)
			}
		case 6: // DW_LNS_negate_stmt
			isStmt = !isStmt
		case 7, 10, 11: // basic_block, prologue_end, epilogue_begin: not kept
		case 8: // DW_LNS_const_add_pc
			addr, opIndex = p.advance(addr, opIndex, (255-opBase)/p.lnRange)
		case 9: // DW_LNS_fixed_advance_pc
			if v, ok = fixed(b, pos, 2); !ok {
				return p.fail(pos, ErrTruncated)
			}
			pos += 2
			addr += v
		default: // unknown standard opcodes: skip the operands the header declares
			for k := 0; k < int(p.opLens[op-1]); k++ {
				if _, pos, ok = uleb(b, pos); !ok {
					return p.fail(pos, ErrTruncated)
				}
			}
		}
	}
	p.pos, p.addr, p.opIndex, p.line, p.file, p.isStmt = pos, addr, opIndex, line, file, isStmt
	return io.EOF
}

// advance moves the operation pointer (addr, opIndex) by n operations
// (DWARF 5, 6.2.5.1), in debug/dwarf's int arithmetic. It is a method
// rather than a closure so that the registers stay in registers.
func (p *LineProgram) advance(addr uint64, opIndex, n int) (uint64, int) {
	if p.maxOps == 1 && opIndex == 0 {
		return addr + uint64(p.minInst*n), 0
	}
	i := opIndex + n
	return addr + uint64(p.minInst*(i/p.maxOps)), i % p.maxOps
}

// isAbs reports whether p is absolute in Unix or DOS form, as debug/dwarf
// decides it.
func isAbs(p string) bool {
	_, rest := splitDrive(p)
	return len(rest) > 0 && (rest[0] == '/' || rest[0] == '\\')
}

func isSep(c byte) bool { return c == '/' || c == '\\' }

// splitDrive splits off a DOS drive letter or UNC \\host\share prefix.
func splitDrive(p string) (drive, rest string) {
	if len(p) >= 2 && p[1] == ':' {
		if c := p[0] | 0x20; 'a' <= c && c <= 'z' {
			return p[:2], p[2:]
		}
	}
	if len(p) > 3 && isSep(p[0]) && isSep(p[1]) {
		host := sepIndex(p, 2)
		if host > 2 {
			if share := sepIndex(p, host+1); share >= 0 {
				return p[:share], p[share:]
			}
		}
	}
	return "", p
}

// sepIndex returns the index of the first separator at or after from, or -1.
func sepIndex(p string, from int) int {
	for i := from; i < len(p); i++ {
		if isSep(p[i]) {
			return i
		}
	}
	return -1
}

// cleanDirs tells for each directory whether joinFast may append to it
// as it is: a Unix path other than "", "." and "/" that path.Clean leaves
// alone.
func cleanDirs(dirs []string) []bool {
	c := make([]bool, len(dirs))
	for i, d := range dirs {
		drive, _ := splitDrive(d)
		c[i] = d != "" && d != "." && d != "/" && drive == "" && path.Clean(d) == d
	}
	return c
}

// joinFast is joinPath with a shortcut for the common case, a clean
// directory and a relative file name without empty, "." or ".."
// elements, where path.Join would only put a slash between them. Header
// file tables are mostly that, and path.Join's cleaning was most of the
// time to open a line program.
func joinFast(dir string, dirClean bool, file string) string {
	if dirClean && relClean(file) {
		return dir + "/" + file
	}
	return joinPath(dir, file)
}

// relClean reports whether file is a relative path that path.Clean
// leaves alone and that has no ".." element.
func relClean(file string) bool {
	if file == "" || file[0] == '/' {
		return false
	}
	start := 0
	for i := 0; i <= len(file); i++ {
		if i < len(file) && file[i] != '/' {
			continue
		}
		switch file[start:i] {
		case "", ".", "..":
			return false
		}
		start = i + 1
	}
	return true
}

// rawJoin is libdw's join of a directory entry and a relative file name:
// a slash between them, nothing cleaned; no directory leaves the name as
// it is.
func rawJoin(dir, file string) string {
	if dir == "" {
		return file
	}
	return dir + "/" + file
}

// joinPath joins a directory and a file name the way debug/dwarf does:
// path.Join for Unix paths, plain concatenation with the directory's
// separator for DOS paths.
func joinPath(dir, file string) string {
	if dir == "" {
		return file
	}
	drive, dir := splitDrive(dir)
	if drive == "" {
		return path.Join(dir, file)
	}
	if drive2, rest := splitDrive(file); drive2 != "" {
		if !strings.EqualFold(drive, drive2) {
			return drive2 + rest
		}
		file = rest
	}
	if dir != "" && !isSep(dir[len(dir)-1]) {
		if dir[0] == '/' {
			dir += "/"
		} else {
			dir += `\`
		}
	}
	return drive + dir + file
}
