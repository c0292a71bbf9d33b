/* An irreducible loop (goto into the middle of a loop body) next to an ordinary reducible loop. */
#include <stdio.h>
#include <stdlib.h>

/* The loop has two entries: the loop test (while) and the label
 * `middle` (via the goto), so neither block dominates the other. */
__attribute__((noinline)) static long irreducible(const int *v, int n, int start_mid) {
  long s = 0;
  int i = 0;
  if (start_mid)
    goto middle;
  while (i < n) {
    s += v[i] * 3;
    if (s & 1)
      s ^= 0x1234;
  middle:
    s += v[i] - 1;
    if (s > 1000000)
      s %= 999983;
    i++;
  }
  return s;
}

/* A second irreducible shape: a two-state machine written with gotos. */
__attribute__((noinline)) static int state_machine(const int *v, int n, int odd) {
  int i = 0, a = 0, b = 0;
  if (odd)
    goto state_b;
state_a:
  if (i >= n)
    return a - b;
  a += v[i++];
  if (a & 4)
    goto state_a;
state_b:
  if (i >= n)
    return a - b;
  b += v[i++] ^ 3;
  if (b & 2)
    goto state_b;
  goto state_a;
}

__attribute__((noinline)) static long normal(const int *v, int n) {
  long s = 0;
  for (int i = 0; i < n; i++)
    s += (long)v[i] * v[i];
  return s;
}

int main(int argc, char **argv) {
  int seed = argc > 1 ? atoi(argv[1]) : 5;
  int n = 1000 + (argc > 2 ? atoi(argv[2]) : 0);
  int *v = malloc(sizeof(int) * (size_t)n);
  if (!v)
    return 1;
  for (int i = 0; i < n; i++)
    v[i] = (i * seed + 11) % 97;
  long r1 = irreducible(v, n, argc & 1);
  long r2 = irreducible(v, n, !(argc & 1));
  int r3 = state_machine(v, n, seed & 1);
  long r4 = normal(v, n);
  printf("%ld %ld %d %ld\n", r1, r2, r3, r4);
  free(v);
  return 0;
}
