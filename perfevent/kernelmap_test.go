package perfevent

import "testing"

// TestKernelRelocSym: the symbol perf names in the kernel mapping's file
// name, and none for other mappings.
func TestKernelRelocSym(t *testing.T) {
	for _, tc := range []struct {
		file, sym string
		ok        bool
	}{
		{"[kernel.kallsyms]_text", "_text", true},
		{"[kernel.kallsyms]_stext", "_stext", true},
		{"[kernel.kallsyms]", "", false},
		{"[vdso]", "", false},
		{"/usr/lib/x86_64-linux-gnu/libc.so.6", "", false},
	} {
		if sym, ok := KernelRelocSym(tc.file); sym != tc.sym || ok != tc.ok {
			t.Errorf("KernelRelocSym(%q) = %q %v, want %q %v", tc.file, sym, ok, tc.sym, tc.ok)
		}
	}
}
