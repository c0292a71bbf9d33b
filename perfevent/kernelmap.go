package perfevent

import "strings"

// KernelMap is what perf names the kernel by: its build-id entry and the
// start of its mapping's file name.
const KernelMap = "[kernel.kallsyms]"

// KernelRelocSym returns the symbol whose address perf gave as the
// offset of the kernel's mapping record: perf record names the mapping
// "[kernel.kallsyms]_text" (or _stext), and its offset is where that
// symbol was in the recording's boot (KASLR moves it every boot). ok is
// false for any other mapping.
func KernelRelocSym(file string) (sym string, ok bool) {
	if sym, ok = strings.CutPrefix(file, KernelMap); !ok || sym == "" {
		return "", false
	}
	return sym, true
}
