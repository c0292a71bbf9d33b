/* Profiler corpus: call paths an unwinder must get through in optimized
   code without frame pointers: recursion 1000 deep, callbacks from libc
   (qsort), libm (exp), a gcc .cold part on the path, and threads. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;
static int bad_seen;

/* Time spent here is reached through qsort's callback. */
__attribute__((noinline)) static int cmp_exp(const void *a, const void *b) {
  double x = exp(*(const double *)a * 1e-3), y = exp(*(const double *)b * 1e-3);
  return (x > y) - (x < y);
}

__attribute__((noinline)) static void sort_work(int n, unsigned seed) {
  double *v = malloc(n * sizeof *v);
  for (int i = 0; i < n; i++)
    v[i] = (double)((i * 7919u + seed) % (unsigned)n);
  qsort(v, n, sizeof *v, cmp_exp);
  sink += v[n / 2];
  free(v);
}

/* Heavy work on the rare path of scan. Calls to a cold function are
   unlikely, so gcc moves the calling block into scan.cold: the return
   address into scan lies in the cold part. */
__attribute__((cold, noinline)) static double heavy(double x, int n) {
  double acc = 0;
  for (int i = 0; i < n; i++)
    acc += exp(x + i * 1e-6);
  return acc;
}

__attribute__((noinline)) static double scan(const double *v, int n, int work) {
  double acc = 0;
  for (int i = 0; i < n; i++) {
    if (v[i] < 0) {
      acc += heavy(v[i], work);
      __atomic_add_fetch(&bad_seen, 1, __ATOMIC_RELAXED);
    }
    acc += v[i];
  }
  return acc;
}

__attribute__((noinline)) static double leaf(int rounds) {
  double v[64];
  for (int i = 0; i < 64; i++)
    v[i] = (i % 16 == 3) ? -1.0 - i : (double)i;
  double acc = 0;
  for (int r = 0; r < rounds; r++) {
    sort_work(2000, (unsigned)r);
    acc += scan(v, 64, 10000);
  }
  return acc;
}

/* Not a tail call: the result is mixed after the call returns. */
__attribute__((noinline)) static int descend(int depth, int rounds) {
  if (depth == 0)
    return (int)leaf(rounds);
  int r = descend(depth - 1, rounds);
  return r ^ (r >> 3) ^ depth;
}

struct job {
  int depth, rounds, result;
};

static void *worker(void *arg) {
  struct job *j = arg;
  j->result = descend(j->depth, j->rounds);
  return NULL;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1000;
  int nthreads = argc > 2 ? atoi(argv[2]) : 2;
  int depth = argc > 3 ? atoi(argv[3]) : 1000;
  pthread_t tid[8];
  struct job jobs[8];
  if (nthreads > 8)
    nthreads = 8;
  for (int t = 0; t < nthreads; t++) {
    jobs[t] = (struct job){depth, rounds, 0};
    pthread_create(&tid[t], NULL, worker, &jobs[t]);
  }
  struct job mine = {depth, rounds, 0};
  worker(&mine);
  int sum = mine.result;
  for (int t = 0; t < nthreads; t++) {
    pthread_join(tid[t], NULL);
    sum += jobs[t].result;
  }
  printf("sum=%d bad=%d\n", sum, bad_seen);
  return 0;
}
