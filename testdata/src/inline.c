/* Inlining: static and static inline functions inlined into loops, a loop inlined into a caller's loop, header code. */
#include <stdio.h>
#include <stdlib.h>
#include "inline_helpers.h"

#define LEN 256

static int clamp(int v, int lo, int hi) {
  if (v < lo)
    return lo;
  if (v > hi)
    return hi;
  return v;
}

static inline int square(int v) { return v * v; }

/* Contains a loop; inlined into the loops of its callers. */
static inline long row_sum(const int *row, int n) {
  long s = 0;
  for (int j = 0; j < n; j++)
    s += square(clamp(row[j], -100, 100));
  return s;
}

/* Calls row_sum from inside its own loop: loop-in-inlined-code-in-loop. */
static long table_sum(const int *t, int rows, int cols) {
  long total = 0;
  for (int i = 0; i < rows; i++)
    total += row_sum(t + i * cols, cols);
  return total;
}

static int data[LEN * 4];
static const double coef[5] = {1.0, -0.5, 0.25, 0.125, -0.0625};

long inline_kernel(int seed, int reps) {
  unsigned h = (unsigned)seed;
  for (int i = 0; i < LEN * 4; i++) {
    h = mix_hash(h, (unsigned)i);
    data[i] = (int)(h % 401) - 200;
  }
  long acc = 0;
  for (int r = 0; r < reps; r++) {
    acc += table_sum(data, 4, LEN);
    acc += row_sum(data + r % LEN, 8);
  }
  return acc;
}

double inline_poly(int steps) {
  double s = 0.0;
  for (int k = 0; k < steps; k++)
    s += poly_eval(coef, 4, k / (double)steps);
  return s;
}

#ifndef INLINE_SHARED
int main(int argc, char **argv) {
  int seed = argc > 1 ? atoi(argv[1]) : 12345;
  int reps = argc > 2 ? atoi(argv[2]) : 100;
  long acc = inline_kernel(seed, reps);
  double p = inline_poly(1000 + argc);
  printf("acc=%ld poly=%.6f\n", acc, p);
  return 0;
}
#endif
