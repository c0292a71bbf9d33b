package dyninst

import (
	"strings"

	"bloop/loader"
	"bloop/procs"
)

// dyninst12NoReturn holds the names Dyninst 12.3 (ParseAPI's CodeSource)
// knows never return, and only those: glibc's, libstdc++'s and
// libgfortran's as of gcc 9 and glibc 2.31, and a few older ones. It is
// the whole of what Dyninst knows of a PLT stub's callee: a call through
// a stub whose name is missing here returns for it, so hpcstruct parses on
// after it (gcc 11's std::__throw_bad_array_new_length is not here).
var dyninst12NoReturn = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`
		_Exit __GI___assert_fail __GI___assert_perror_fail __GI___chk_fail
		__GI___fortify_fail __GI___libc_dynarray_at_failure __GI___libc_fatal
		__GI__dl_signal_error __GI__dl_signal_exception __GI__exit __GI_abort
		__GI_exit __GI_verr __GI_verrx __assert __assert_fail __assert_fail_base
		__assert_perror_fail __chk_fail __fortify_fail __libc_dynarray_at_failure
		__libc_fatal __libc_main __libc_siglongjmp __libc_start_main
		__run_exit_handlers __stack_chk_fail __stack_chk_fail_local
		_dl_signal_error _dl_signal_exception _dl_start _exit _longjmp abort err
		errx exit fatal_error longjmp mabort malloc_printerr print_and_abort
		siglongjmp svctcp_rendezvous_abort svcunix_rendezvous_abort verr verrx

		__GI___pthread_unwind __GI___pthread_unwind_next __nptl_main
		__pthread_exit __pthread_unwind __pthread_unwind_next longjmp_alias
		longjmp_compat pthread_exit siglongjmp_alias start_thread thrd_exit

		_ZN10__cxxabiv111__terminateEPFvvE _ZN10__cxxabiv112__unexpectedEPFvvE
		_ZN9__gnu_cxx26__throw_insufficient_spaceEPKcS1_
		_ZNK11__gnu_debug16_Error_formatter8_M_errorEv _ZSt10unexpectedv
		_ZSt16__throw_bad_castv _ZSt17__throw_bad_allocv
		_ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE
		_ZSt18__throw_bad_typeidv _ZSt19__throw_ios_failurePKc
		_ZSt19__throw_ios_failurePKci _ZSt19__throw_logic_errorPKc
		_ZSt19__throw_range_errorPKc _ZSt20__throw_domain_errorPKc
		_ZSt20__throw_future_errori _ZSt20__throw_length_errorPKc
		_ZSt20__throw_out_of_rangePKc _ZSt20__throw_system_errori
		_ZSt21__throw_bad_exceptionv _ZSt21__throw_runtime_errorPKc
		_ZSt22__throw_overflow_errorPKc _ZSt23__throw_underflow_errorPKc
		_ZSt24__throw_invalid_argumentPKc _ZSt24__throw_out_of_range_fmtPKcz
		_ZSt25__throw_bad_function_callv _ZSt9terminatev __cxa_bad_cast
		__cxa_bad_typeid __cxa_call_unexpected __cxa_deleted_virtual
		__cxa_pure_virtual __cxa_rethrow __cxa_throw
		__cxa_throw_bad_array_new_length

		_gfortran_error_stop_numeric _gfortran_error_stop_string
		_gfortran_os_error _gfortran_runtime_error _gfortran_runtime_error_at
		_gfortran_stop_numeric _gfortran_stop_string _gfortrani_exit_error
		_gfortrani_internal_error _gfortrani_os_error _gfortrani_runtime_error
		_gfortrani_runtime_error_at _gfortrani_sys_abort

		GOMP_PLUGIN_fatal gomp_fatal gomp_vfatal

		__error_at_line_noreturn __error_noreturn __longjmp_chk quick_exit
		__f90_stop fancy_abort ExitProcess _Unwind_Resume __longjmp
		_gfortran_abort _gfortran_exit_i8 _gfortran_exit_i4 for_stop_core
		__sys_exit`) {
		dyninst12NoReturn[n] = true
	}
}

// NoReturnName reports whether the policy's parser knows by name that
// the procedure a symbol or PLT stub names (foo, foo@plt,
// foo@GLIBC_2.2.5) never returns; with no policy, whether bloop knows
// (procs.NoReturn).
func (p *Policy) NoReturnName(name string) bool {
	if p == nil {
		return procs.NoReturn(name)
	}
	return p.noReturn[procs.BareName(name)]
}

// NoReturnAddrs are the entries of the procedures whose names say a call
// to them never returns. Under a policy a PLT stub's callee is known by
// the names its parser knows only (NoReturnName): a call through any
// other stub returns for it, and hpcstruct parses on after it. A
// procedure of the image is known by both lists: Dyninst parses it and
// finds that it never returns, which bloop's names stand for.
func (p *Policy) NoReturnAddrs(img *loader.Image) map[uint64]bool {
	set := map[uint64]bool{}
	for _, fn := range img.Funcs {
		for _, a := range fn.Aliases {
			no := procs.NoReturn(a)
			if p != nil {
				no = p.NoReturnName(a) || no && !fn.PLT
			}
			if no {
				set[fn.Addr] = true
				if fn.LocalEntry != 0 {
					set[fn.LocalEntry] = true
				}
			}
		}
	}
	return set
}
