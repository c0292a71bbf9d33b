/* decide.c: what compilers decide differently about whole functions, for
   bloop diff's compiler-version pairs (testdata/bin-cc): gcc's clones
   (.constprop, .isra), partial inlining (.part), hot/cold splitting
   (.cold), inlining by default against -fno-inline, and always_inline. */
#include <stdio.h>
#include <stdlib.h>

struct vec {
  const long *data;
  int len;
  int pad[8];
};

/* Inlined everywhere whatever the flags. */
static inline __attribute__((always_inline)) long sq(long x) { return x * x; }

/* Called once: inlined by default, out of line with -fno-inline. */
static long sum_squares(const long *a, int n) {
  long s = 0;
  for (int i = 0; i < n; i++)
    s += sq(a[i]);
  return s;
}

/* Never inlined, always called with k = 3: gcc's IPA-CP makes
   scale.constprop.0. */
static __attribute__((noinline)) long scale(const long *a, int n, long k) {
  long s = 0;
  for (int i = 0; i < n; i++)
    s += a[i] * k + (a[i] >> 2);
  return s;
}

/* Reads two fields of a struct passed by pointer: gcc's IPA-SRA passes
   them instead (count.isra.0). */
static __attribute__((noinline)) long count_pos(const struct vec *v) {
  long c = 0;
  for (int i = 0; i < v->len; i++)
    c += v->data[i] > 0;
  return c;
}

/* A cheap, likely early exit before a heavy body: gcc inlines the test
   into the callers and outlines the rest (find.part.0). */
static int find(const long *a, int n, long key) {
  if (__builtin_expect(n <= 0 || key < 0, 1))
    return -1;
  long best = -1, bestd = 1L << 60;
  for (int i = 0; i < n; i++) {
    long d = a[i] > key ? a[i] - key : key - a[i];
    if (d < bestd) {
      bestd = d;
      best = i;
    }
    if (d == 0)
      break;
  }
  for (int i = 0; i < n; i++)
    if (a[i] == a[best] && i != best)
      printf("dup %d\n", i);
  return (int)best;
}

struct node {
  struct node *kid[2];
  long val;
};

/* A cheap test before a recursive body: gcc inlines the test into the
   callers and outlines the rest (release.part.0: partial inlining). */
static void release(struct node *n) {
  if (n == NULL)
    return;
  for (int i = 0; i < 2; i++) {
    if (n->kid[i]) {
      release(n->kid[i]);
      printf("free %ld\n", n->kid[i]->val);
    }
  }
  free(n);
}

__attribute__((noinline)) static void drop(struct node *n) { release(n); }

/* A cold function: its calls are never expected. */
__attribute__((cold, noinline, noreturn)) static void out_of_range(long v, int i) {
  fprintf(stderr, "value %ld out of range at %d\n", v, i);
  exit(3);
}

/* An error path on a loop's branch to a cold function: gcc moves it to
   checked_total.cold. */
__attribute__((noinline)) long checked_total(const long *a, int n) {
  long s = 0;
  for (int i = 0; i < n; i++) {
    if (a[i] < -1000000)
      out_of_range(a[i], i);
    s += a[i];
  }
  return s;
}

int main(int argc, char **argv) {
  long a[64];
  int n = argc > 1 ? atoi(argv[1]) : 64;
  if (n > 64)
    n = 64;
  for (int i = 0; i < n; i++)
    a[i] = (i * 37) % 23 - 7;
  struct vec v = {a, n, {0}};
  long r = sum_squares(a, n);
  r += scale(a, n, 3) + scale(a + 1, n - 1, 3);
  r += count_pos(&v);
  r += find(a, n, argc > 2 ? atol(argv[2]) : 5) + find(a + 2, n - 2, 4);
  r += checked_total(a, n);
  struct node *t = calloc(1, sizeof *t);
  if (t && argc > 3)
    t->kid[0] = calloc(1, sizeof *t);
  drop(t);
  release(argc > 4 ? t : NULL);
  printf("%ld\n", r);
  return 0;
}
