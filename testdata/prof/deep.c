/* Profiler corpus: deep call stacks for the recording-overhead measurement
   (scripts/overhead.sh): recursion that goes several hundred frames deep
   at times, qsort with a comparison callback, and libm (exp, sin, log),
   single-threaded and CPU-bound. Argument: iterations (default 12000,
   about 2.5 s with gcc -O2). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

/* qsort's callback: each comparison calls into libm. */
__attribute__((noinline)) static int cmp_sin(const void *a, const void *b) {
  double x = sin(*(const double *)a), y = sin(*(const double *)b);
  return (x > y) - (x < y);
}

/* The work at the bottom of the recursion: a sort through libc and a
   libm loop, so samples land in libc, libm and the program. */
__attribute__((noinline)) static double work(unsigned seed) {
  double v[256];
  for (int i = 0; i < 256; i++)
    v[i] = (double)((i * 7919u + seed) % 1021u);
  qsort(v, 256, sizeof *v, cmp_sin);
  double acc = 0;
  for (int i = 1; i < 256; i++)
    acc += exp(-v[i] * 1e-3) * log(v[i] + 1.0);
  return acc + v[128];
}

/* Not a tail call (the result is mixed after the call), and a small
   array keeps each frame a realistic size. */
__attribute__((noinline)) static double descend(int depth, unsigned seed) {
  volatile double pad[2] = {depth, seed};
  if (depth == 0)
    return work(seed);
  double r = descend(depth - 1, seed * 1103515245u + 12345u);
  return r * 0.5 + pad[0] - pad[1] * 1e-9;
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 12000;
  double sum = 0;
  for (int i = 0; i < iters; i++) {
    /* Depth cycles through 0..599: at times several hundred frames. */
    int depth = (i * 37) % 600;
    for (int k = 0; k < 4; k++)
      sum += descend(depth, (unsigned)(i * 4 + k));
  }
  sink = sum;
  printf("sum=%.6g\n", sum);
  return 0;
}
