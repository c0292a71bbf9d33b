/* Loop shapes: 2- and 3-deep nests, a loop with break/continue, a while loop, a do-while loop. */
#include <stdio.h>
#include <stdlib.h>

#define N 64

static double a[N][N], b[N][N], c[N][N];

__attribute__((noinline)) static void init(int seed) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      a[i][j] = (double)((i * seed + j) % 17) / 8.0;
      b[i][j] = (double)((j * seed + i) % 13) / 4.0;
    }
}

__attribute__((noinline)) static void matmul(int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0.0;
      for (int k = 0; k < n; k++)
        s += a[i][k] * b[k][j];
      c[i][j] = s;
    }
}

__attribute__((noinline)) static int first_big(int n, double limit) {
  int found = -1;
  for (int i = 0; i < n * n; i++) {
    double v = c[i / n][i % n];
    if (v < limit - 5.0)
      continue;
    if (v > limit) {
      found = i;
      break;
    }
  }
  return found;
}

__attribute__((noinline)) static long collatz_steps(long x) {
  long steps = 0;
  while (x != 1) {
    x = (x & 1) ? 3 * x + 1 : x / 2;
    steps++;
  }
  return steps;
}

__attribute__((noinline)) static unsigned digit_sum(unsigned v) {
  unsigned s = 0;
  do {
    s += v % 10;
    v /= 10;
  } while (v != 0);
  return s;
}

int main(int argc, char **argv) {
  int seed = argc > 1 ? atoi(argv[1]) : 7;
  int n = argc > 2 ? atoi(argv[2]) : N;
  if (n < 1 || n > N)
    n = N;
  init(seed);
  matmul(n);
  int big = first_big(n, 95.0 + seed);
  long steps = 0;
  for (int i = 1; i <= 1000 + seed; i++)
    steps += collatz_steps(i);
  unsigned ds = digit_sum((unsigned)(steps * seed + argc));
  printf("c[1][1]=%.3f big=%d steps=%ld digits=%u\n", c[1][1], big, steps, ds);
  return 0;
}
