/* Half of the time in a signal handler: SIGALRM every millisecond
 * (setitimer) runs a busy loop, interrupting main's own busy loop. The
 * unwinder must go through the kernel's signal frame (glibc's
 * __restore_rt trampoline and the saved context) to reach main and
 * _start. Usage: sig [MILLISECONDS], default 1000. */
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
	spin(200000);
}

__attribute__((noinline)) static void work(void) {
	spin(100000);
}

int main(int argc, char **argv) {
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	struct sigaction sa = {0};
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, 0);
	struct itimerval it = {{0, 1000}, {0, 1000}};
	setitimer(ITIMER_REAL, &it, 0);
	while (ticks < ms)
		work();
	return 0;
}
