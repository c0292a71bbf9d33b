package procs

import "strings"

// noReturn lists library procedures known never to return.
var noReturnNames = map[string]bool{
	"exit": true, "_exit": true, "_Exit": true, "abort": true, "quick_exit": true,
	"__stack_chk_fail": true, "__assert_fail": true, "__assert_perror_fail": true,
	"__cxa_throw": true, "__cxa_rethrow": true, "_Unwind_Resume": true,
	"__cxa_bad_cast": true, "__cxa_bad_typeid": true, "__cxa_throw_bad_array_new_length": true,
	"__cxa_call_unexpected": true, "__cxa_pure_virtual": true, "_ZSt9terminatev": true,
	"longjmp": true, "siglongjmp": true, "_longjmp": true, "__longjmp_chk": true,
	"pthread_exit": true, "__fortify_fail": true, "__chk_fail": true, "__libc_fatal": true,
	"err": true, "errx": true, "verr": true, "verrx": true,
	"_gfortran_stop_string": true, "_gfortran_error_stop_string": true,
	"_gfortran_error_stop_numeric": true, "_gfortran_runtime_error": true,
	"_gfortran_runtime_error_at": true, "_gfortran_os_error": true, "_gfortran_os_error_at": true,
	"_gfortran_generate_error": true,
	// Declared noreturn, and known to Dyninst by name (its CodeSource list),
	// so hpcstruct ends the block after a call to any of them too.
	"_ZSt10unexpectedv": true, "_ZN10__cxxabiv111__terminateEPFvvE": true,
	"_ZN10__cxxabiv112__unexpectedEPFvvE": true, "__cxa_deleted_virtual": true,
	"_ZN9__gnu_cxx26__throw_insufficient_spaceEPKcS1_":            true,
	"_ZNK11__gnu_debug16_Error_formatter8_M_errorEv":              true,
	"_ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE": true,
	"__stack_chk_fail_local":                                      true, "__libc_start_main": true, "__pthread_unwind_next": true,
	"thrd_exit": true, "__error_noreturn": true, "__error_at_line_noreturn": true,
	"_gfortran_stop_numeric": true, "_gfortran_abort": true, "_gfortran_exit_i4": true,
	"_gfortran_exit_i8": true, "GOMP_PLUGIN_fatal": true,
}

// NoReturn reports whether the procedure a symbol or PLT stub names
// (foo, foo@plt, foo@GLIBC_2.2.5) never returns: a call to it may be the
// last instruction of its procedure.
func NoReturn(name string) bool {
	name = BareName(name)
	// std::__throw_* helpers of libstdc++ never return.
	return noReturnNames[name] || strings.HasPrefix(name, "_ZSt") && strings.Contains(name, "__throw_")
}

// BareName is a symbol or stub name without @plt and symbol version.
func BareName(name string) string {
	name = strings.TrimSuffix(name, "@plt")
	if i := strings.IndexByte(name, '@'); i > 0 {
		name = name[:i]
	}
	return name
}
