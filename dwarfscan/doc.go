// Package dwarfscan decodes DWARF 2-5 units, entries, address ranges and
// line programs from section bytes, without allocating per entry.
//
// It exists because debug/dwarf allocates an Entry, a []Field and boxed
// values for every entry, which dominates the time to walk the DWARF of
// large optimized binaries. A Data is immutable after New and may be
// shared by many goroutines; each goroutine uses its own Reader and
// LineProgram.
//
// Strings taken from .debug_str, .debug_line_str (directly or through
// .debug_str_offsets) are not copied: they point into the section bytes,
// which therefore must never be modified while such strings are in use.
// DW_FORM_string values are copied, so that names a caller keeps do not
// pin .debug_info. Only little-endian DWARF is supported.
//
// Where it matches debug/dwarf: the differential test requires the same
// entries, attribute values, address ranges (Data.Ranges) and line rows
// (LineProgram.Next, LineProgram.Files) as debug/dwarf on every test
// binary. Where it deliberately differs, the doc comment says so.
//
// Benchmarks on libjvm's debug file (skipped when absent); delve's line
// parser is measured beside the others only with the delvebench tag:
//
//	go test -run XXX -bench . -benchtime=1x ./dwarfscan/
//	go test -tags delvebench -modfile=dwarfscan/testdata/delve.mod -mod=mod \
//		-run XXX -bench . -benchtime=1x ./dwarfscan/
package dwarfscan
