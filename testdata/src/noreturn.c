/* Noreturn calls in branches inside loops: exit, abort, a noreturn function of our own, assert. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noreturn, noinline)) static void fatal(const char *what, int code) {
  fprintf(stderr, "fatal: %s\n", what);
  exit(code);
}

__attribute__((noinline)) static long checked_sum(const int *v, int n) {
  long s = 0;
  for (int i = 0; i < n; i++) {
    if (v[i] < 0)
      fatal("negative element", 3);
    s += v[i];
  }
  return s;
}

__attribute__((noinline)) static int scan(const int *v, int n, int limit) {
  int hits = 0;
  for (int i = 0; i < n; i++) {
    assert(v[i] <= limit);
    if (v[i] < -limit)
      abort();
    hits += v[i] == limit;
  }
  return hits;
}

__attribute__((noinline)) static long drain(int *v, int n, int budget) {
  long work = 0;
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < n; i++) {
      work += v[i] / (round + 1);
      if (work > budget) {
        printf("budget exceeded at round %d\n", round);
        exit(0);
      }
    }
  }
  return work;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 500;
  int budget = argc > 2 ? atoi(argv[2]) : 1 << 30;
  if (n <= 0)
    fatal("bad size", 2);
  int *v = malloc(sizeof(int) * (size_t)n);
  if (!v)
    abort();
  for (int i = 0; i < n; i++)
    v[i] = (i * 37 + argc) % 50;
  long s = checked_sum(v, n);
  int h = scan(v, n, 49);
  long w = drain(v, n, budget);
  printf("sum=%ld hits=%d work=%ld\n", s, h, w);
  free(v);
  return 0;
}
