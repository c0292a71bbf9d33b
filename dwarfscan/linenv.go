package dwarfscan

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// NVIDIA's extension of the line program (nvcc 11.2 on, for -lineinfo
// cubins, which have no .debug_info to hold inline records): rows carry
// two more registers, set by two extended opcodes in the vendor range.
//
//   - DW_LNE_NVIDIA_inlined_call (0x90), operands ULEB128 context and
//     function name: from here on rows are code of the named function,
//     inlined at the call site that row number context (1-based, counted
//     from the start of the sequence) describes; context 0 ends that.
//   - DW_LNE_NVIDIA_set_function_name (0x91), operand ULEB128 function
//     name.
//
// A function name is an offset into .debug_str relative to a base that a
// 4-byte word after the file table gives (FuncNameBase). Both registers
// return to 0 at the end of a sequence only. (elfutils' libdw and readelf
// read the same encoding; its announcement, elfutils 0.186, describes it.)
const (
	lneNVInlinedCall     = 0x90
	lneNVSetFunctionName = 0x91
)

// ErrInlinedCall is the cause of a DecodeError for an NVIDIA inlined-call
// or function-name opcode whose operands do not fit in its length.
var ErrInlinedCall = errors.New("NVIDIA inlined-call opcode malformed")

// FuncNameBase is the offset in .debug_str that the function names of
// NVIDIA's inlined-call rows are relative to, and whether the header has
// it (a word between the file table and the first opcode).
func (p *LineProgram) FuncNameBase() (uint64, bool) { return p.nvBase, p.hasNVBase }

// readNVBase reads the word NVIDIA puts between the file table and the
// program, when the header has room left for one.
func (p *LineProgram) readNVBase(b *buf) {
	if p.start-b.pos < 4 {
		return
	}
	p.nvBase = uint64(binary.LittleEndian.Uint32(b.data[b.pos:]))
	p.hasNVBase = true
}

// nvidiaOp decodes the operands of extended opcode sub, which run from pos
// to end (the opcode's length), into the context and function-name
// registers. It reports whether sub is one of NVIDIA's.
func nvidiaOp(b []byte, sub byte, pos, end int, context, funcName *uint64) (bool, error) {
	if sub != lneNVInlinedCall && sub != lneNVSetFunctionName {
		return false, nil
	}
	var ok bool
	var c uint64
	b = b[:end]
	if sub == lneNVInlinedCall {
		if c, pos, ok = uleb(b, pos); !ok {
			return true, fmt.Errorf("%w: context", ErrInlinedCall)
		}
	}
	f, _, ok := uleb(b, pos)
	if !ok {
		return true, fmt.Errorf("%w: function name", ErrInlinedCall)
	}
	if sub == lneNVInlinedCall {
		*context = c
	}
	*funcName = f
	return true, nil
}

// truncatedExtended is the error for an extended opcode that runs past
// the program: ErrInlinedCall when it is NVIDIA's (its sub-opcode, at
// next, is there to tell), else ErrTruncated.
func truncatedExtended(b []byte, next int, lenOK bool) error {
	if lenOK && next < len(b) && (b[next] == lneNVInlinedCall || b[next] == lneNVSetFunctionName) {
		return fmt.Errorf("%w: runs past the program", ErrInlinedCall)
	}
	return fmt.Errorf("%w: extended opcode", ErrTruncated)
}
