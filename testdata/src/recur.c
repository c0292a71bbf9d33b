/* Recursion: non-tail (tree build/walk, fib), tail calls to other functions, mutual recursion. */
#include <stdio.h>
#include <stdlib.h>

struct node {
  struct node *left, *right;
  int key;
};

/* Non-tail recursion: two recursive calls, result combined afterwards. */
__attribute__((noinline)) static struct node *build(int lo, int hi) {
  if (lo > hi)
    return NULL;
  int mid = lo + (hi - lo) / 2;
  struct node *t = malloc(sizeof *t);
  if (!t)
    abort();
  t->key = mid;
  t->left = build(lo, mid - 1);
  t->right = build(mid + 1, hi);
  return t;
}

__attribute__((noinline)) static long depth_sum(const struct node *t, int depth) {
  if (!t)
    return 0;
  return (long)t->key * depth + depth_sum(t->left, depth + 1) + depth_sum(t->right, depth + 1);
}

__attribute__((noinline)) static void release(struct node *t) {
  if (!t)
    return;
  release(t->left);
  release(t->right);
  free(t);
}

__attribute__((noinline)) static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

/* Mutual recursion. */
__attribute__((noinline)) static int is_odd(unsigned n);
__attribute__((noinline)) static int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }
__attribute__((noinline)) static int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }

/* Tail calls: each function ends in a call to a different function. */
__attribute__((noinline)) static long finish(long x, int k) { return x * 31 + k; }
__attribute__((noinline)) static long stage2(long x, int k) { return finish(x ^ 0x77, k + 2); }
__attribute__((noinline)) static long stage1(long x, int k) {
  if (x < 0)
    return finish(-x, k);
  return stage2(x + k, k + 1);
}

/* Self tail recursion (turned into a loop at -O2). */
__attribute__((noinline)) static long gcd(long a, long b) { return b == 0 ? a : gcd(b, a % b); }

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  int f = argc > 2 ? atoi(argv[2]) : 25;
  struct node *t = build(1, n);
  long ds = depth_sum(t, 1);
  release(t);
  long fb = fib(f);
  int ev = is_even((unsigned)(n + argc));
  long tc = 0;
  for (int i = -5; i < 100; i++)
    tc += stage1(i * (long)n, i & 7);
  long g = gcd(fb, ds);
  printf("depth_sum=%ld fib=%ld even=%d tail=%ld gcd=%ld\n", ds, fb, ev, tc, g);
  return 0;
}
