package loader

import (
	"debug/elf"
	"testing"
)

// TestDyninstClassify pins elfclassify's (and Dyninst 12.3's) reading of
// a file as executable or shared library: the "[module]" suffix follows
// onlyExecutable, the _start hint program.
func TestDyninstClassify(t *testing.T) {
	lib := elfFacts{typ: elf.ET_DYN, loadable: true, dynamic: true, soname: "libz.so.1", textLo: 0x3340, textHi: 0x15000}
	with := func(f func(*elfFacts)) elfFacts {
		c := lib
		f(&c)
		return c
	}
	for _, c := range []struct {
		name          string
		facts         elfFacts
		exec, program bool
	}{
		{"library", lib, false, false},
		{"library that runs (libc.so.6: soname and interpreter)", with(func(c *elfFacts) { c.interp, c.entry = true, 0x27200 }), false, true},
		{"PIE", with(func(c *elfFacts) { c.soname, c.interp, c.pie, c.entry = "", true, true, 0x4000 }), true, true},
		{"PIE without DF_1_PIE", with(func(c *elfFacts) { c.soname, c.interp = "", true }), true, true},
		{"PIE flag beats soname", with(func(c *elfFacts) { c.pie = true }), true, true},
		{"no soname, no interpreter", with(func(c *elfFacts) { c.soname = "" }), false, false},
		{"DT_DEBUG without interpreter", with(func(c *elfFacts) { c.soname, c.debug = "", true }), true, true},
		{"static executable", elfFacts{typ: elf.ET_EXEC, loadable: true, entry: 0x401000}, true, true},
		{"ld.so: entry at .text's start", with(func(c *elfFacts) { c.soname, c.entry = "ld-linux-x86-64.so.2", 0x3340 }), false, true},
		{"entry inside .text", with(func(c *elfFacts) { c.entry = 0x4000 }), false, true},
		{"vdso32: entry inside .text", with(func(c *elfFacts) { c.soname, c.entry = "linux-gate.so.1", 0x4000 }), false, false},
		{"no dynamic segment", with(func(c *elfFacts) { c.dynamic = false }), true, false},
		{"not loadable", with(func(c *elfFacts) { c.loadable, c.interp = false, true }), false, false},
	} {
		if e, p := c.facts.onlyExecutable(), c.facts.program(); e != c.exec || p != c.program {
			t.Errorf("%s: executable only %v, program %v; want %v, %v", c.name, e, p, c.exec, c.program)
		}
	}
}
