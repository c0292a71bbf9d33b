/* Time in a signal handler: SIGPROF every 10 ms of CPU time (setitimer
 * ITIMER_PROF, so the share does not depend on the machine's load) runs a
 * busy loop of a few milliseconds, several sampling periods (at 1 kHz, a
 * handler shorter than one would be missed or hit by the phase of the two
 * timers), interrupting main's own busy loop. The
 * unwinder must go through the kernel's signal frame (glibc's
 * __restore_rt trampoline and the saved context) to reach main and
 * _start. Usage: sig [ALARMS], default 100. */
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>

static volatile unsigned long sink;
static volatile sig_atomic_t ticks;

__attribute__((noinline)) static void spin(unsigned long n) {
	for (unsigned long i = 0; i < n; i++)
		sink += i * i;
}

static void on_alarm(int sig) {
	(void)sig;
	ticks++;
	spin(10000000);
}

__attribute__((noinline)) static void work(void) {
	spin(100000);
}

int main(int argc, char **argv) {
	long ms = argc > 1 ? atol(argv[1]) : 100;
	struct sigaction sa = {0};
	sa.sa_handler = on_alarm;
	sigaction(SIGPROF, &sa, 0);
	struct itimerval it = {{0, 10000}, {0, 10000}};
	setitimer(ITIMER_PROF, &it, 0);
	while (ticks < ms)
		work();
	return 0;
}
