/* -O3 transformations: loop-invariant code motion, unrolling of a fixed-trip inner loop, vectorized reduction. */
#include <stdio.h>
#include <stdlib.h>

#define ROWS 512
#define COLS 8 /* fixed trip count: fully unrolled at -O3 */

static float m[ROWS][COLS];
static float v[4096];
static int w[4096];

/* scale * offset + bias is invariant in both loops and should be hoisted. */
__attribute__((noinline)) static void transform(float scale, float offset, float bias, int rows) {
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < COLS; j++)
      m[i][j] = m[i][j] * (scale * offset + bias) + (float)j * scale;
}

/* FP reduction: kept in order (no -ffast-math), but unrolled at -O3 by clang. */
__attribute__((noinline)) static double reduce(const float *x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += x[i];
  return s;
}

/* Integer reduction over an array: vectorized and unrolled at -O3. */
__attribute__((noinline)) static long ireduce(const int *x, int n) {
  long s = 0;
  for (int i = 0; i < n; i++)
    s += x[i];
  return s;
}

/* Invariant load through a pointer plus an invariant division. */
__attribute__((noinline)) static void axpy(float *restrict y, const float *restrict x,
                                           const float *alpha, int n, int d) {
  for (int i = 0; i < n; i++)
    y[i] += (*alpha / (float)d) * x[i];
}

__attribute__((noinline)) static int count_above(const float *x, int n, float t) {
  int c = 0;
  for (int i = 0; i < n; i++)
    c += x[i] > t * 0.5f;
  return c;
}

int main(int argc, char **argv) {
  int seed = argc > 1 ? atoi(argv[1]) : 3;
  int d = argc > 2 ? atoi(argv[2]) : 2;
  if (d == 0)
    d = 1;
  for (int i = 0; i < ROWS; i++)
    for (int j = 0; j < COLS; j++)
      m[i][j] = (float)((i * seed + j) % 11);
  for (int i = 0; i < 4096; i++) {
    v[i] = (float)((i ^ seed) & 63) / 16.0f;
    w[i] = (i * seed) % 1000 - 300;
  }
  float alpha = 0.25f * seed;
  for (int it = 0; it < 10; it++) {
    transform(0.5f, (float)seed, 1.0f / (float)(it + 1), ROWS);
    axpy(v, &m[0][0], &alpha, ROWS * COLS, d);
  }
  double s = reduce(v, 4096);
  int c = count_above(v, 4096, (float)seed);
  long is = ireduce(w, 4096 - argc);
  printf("sum=%.3f above=%d isum=%ld m=%.3f\n", s, c, is, m[ROWS - 1][COLS - 1]);
  return 0;
}
