/* A workload that samples itself, for bloop's end-to-end tests of
   aarch64 and ppc64le recordings made on x86-64 under qemu user-mode
   emulation, where perf_event_open samples the emulator, not the guest.
   A SIGPROF handler (setitimer(ITIMER_PROF)) copies the interrupted
   registers (pc, sp, frame pointer, link register) from its ucontext and
   the stack from sp up to __libc_stack_end, as the kernel does for
   perf_event_open's user registers and stack; at exit the samples and
   /proc/self/maps go to the file named by the first argument (format in
   crossrec_test.go). Built static, so the recording needs no other
   module. The work: recursion (descend), a callback from libc's qsort
   (cmp), and a leaf loop (leaf). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>

extern void *__libc_stack_end;

#define MAXSAMPLES 64
#define MAXSTACK 16384

struct sample {
  uint64_t pc, sp, fp, lr, n;
  unsigned char stack[MAXSTACK];
};

static struct sample samples[MAXSAMPLES];
static volatile int nsamples;
static volatile double sink;

static void on_prof(int sig, siginfo_t *si, void *ctx) {
  (void)sig;
  (void)si;
  ucontext_t *uc = ctx;
  if (nsamples >= MAXSAMPLES)
    return;
  struct sample *s = &samples[nsamples];
#if defined(__aarch64__)
  s->pc = uc->uc_mcontext.pc;
  s->sp = uc->uc_mcontext.sp;
  s->fp = uc->uc_mcontext.regs[29];
  s->lr = uc->uc_mcontext.regs[30];
#elif defined(__powerpc64__)
  s->pc = uc->uc_mcontext.gp_regs[32]; /* PT_NIP */
  s->sp = uc->uc_mcontext.gp_regs[1];
  s->fp = uc->uc_mcontext.gp_regs[31];
  s->lr = uc->uc_mcontext.gp_regs[36]; /* PT_LNK */
#else
#error "aarch64 or ppc64le"
#endif
  uint64_t top = (uint64_t)__libc_stack_end + 64;
  uint64_t n = top > s->sp ? top - s->sp : 0;
  if (n > MAXSTACK)
    n = MAXSTACK;
  s->n = n;
  memcpy(s->stack, (void *)s->sp, n);
  nsamples++;
}

__attribute__((noinline)) static double leaf(int n) {
  double acc = 0;
  for (int i = 0; i < n; i++)
    acc += (double)(i % 7) * 0.5;
  return acc;
}

__attribute__((noinline)) static int cmp(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

__attribute__((noinline)) static double work(int n) {
  int v[512];
  for (int i = 0; i < 512; i++)
    v[i] = (i * 7919 + n) % 1009;
  qsort(v, 512, sizeof v[0], cmp);
  return leaf(n) + v[256];
}

/* Not a tail call: the result is used after the call returns. */
__attribute__((noinline)) static double descend(int depth, int n) {
  if (depth == 0)
    return work(n);
  double r = descend(depth - 1, n);
  return r * 0.5 + depth;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s OUT\n", argv[0]);
    return 2;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_prof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGPROF, &sa, NULL);
  struct itimerval it = {{0, 2000}, {0, 2000}};
  setitimer(ITIMER_PROF, &it, NULL);
  for (int r = 0; nsamples < MAXSAMPLES && r < 200000; r++)
    sink += descend(r % 12, 20000);
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_PROF, &off, NULL);
  FILE *out = fopen(argv[1], "wb");
  if (!out)
    return 1;
  static char maps[65536];
  FILE *m = fopen("/proc/self/maps", "r");
  size_t mn = m ? fread(maps, 1, sizeof maps, m) : 0;
  if (m)
    fclose(m);
  uint64_t hdr[2] = {(uint64_t)nsamples, (uint64_t)mn};
  fwrite("BLOOPQS1", 1, 8, out);
  fwrite(hdr, sizeof hdr, 1, out);
  fwrite(maps, 1, mn, out);
  for (int i = 0; i < nsamples; i++) {
    fwrite(&samples[i], 5 * sizeof(uint64_t), 1, out);
    fwrite(samples[i].stack, 1, samples[i].n, out);
  }
  fclose(out);
  return 0;
}
