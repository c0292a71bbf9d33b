/* Profiler target: nearly all time is spent in one loop of a static inline function inlined into main. */
#include <stdio.h>
#include <stdlib.h>

static inline double hot_loop(long iters, double x) {
  double acc = 0.0;
  for (long i = 0; i < iters; i++) {
    x = x * 1.0000001 + 0.5;
    if (x > 1e6)
      x *= 1e-6;
    acc += x * 0.25;
  }
  return acc;
}

static double setup(int seed) {
  double x = 0.0;
  for (int i = 0; i < 1000; i++)
    x += (i ^ seed) * 1e-3;
  return x;
}

int main(int argc, char **argv) {
  long iters = argc > 1 ? atol(argv[1]) : 300000000L;
  int seed = argc > 2 ? atoi(argv[2]) : 1;
  double x = setup(seed);
  volatile double result = hot_loop(iters, x);
  printf("result=%.6e\n", result);
  return 0;
}
