/* A C program for the stripped-code tests: loops of several shapes, a
   switch, a callback, recursion, a constructor and a destructor. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int table[256];

__attribute__((constructor)) static void fill(void) {
	for (int i = 0; i < 256; i++)
		table[i] = (i * 2654435761u) >> 24;
}

__attribute__((destructor)) static void report(void) {
	long s = 0;
	for (int i = 0; i < 256; i++)
		s += table[i];
	fprintf(stderr, "%ld\n", s);
}

static int cmp(const void *a, const void *b) {
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

__attribute__((noinline)) static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__attribute__((noinline)) long classify(const char *s) {
	long n = 0;
	for (; *s; s++) {
		switch (*s) {
		case 'a': n += 1; break;
		case 'b': n += 3; break;
		case 'c': n *= 2; break;
		case 'd': n -= 7; break;
		case 'e': n ^= 5; break;
		case 'f': n += table[n & 255]; break;
		default: n++;
		}
	}
	return n;
}

__attribute__((noinline)) double matmul(int n, const double *a, const double *b, double *c) {
	double t = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double s = 0;
			for (int k = 0; k < n; k++)
				s += a[i * n + k] * b[k * n + j];
			c[i * n + j] = s;
			t += s;
		}
	return t;
}

__attribute__((noinline)) int search(const int *v, int n, int x) {
	int lo = 0, hi = n;
	while (lo < hi) {
		int m = (lo + hi) / 2;
		if (v[m] < x)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 50;
	int *v = malloc(n * sizeof *v);
	double *m = calloc(3 * n * n, sizeof *m);
	if (!v || !m)
		return 1;
	for (int i = 0; i < n; i++)
		v[i] = table[(i * 7) & 255];
	qsort(v, n, sizeof *v, cmp);
	for (int i = 0; i < n * n; i++)
		m[i] = m[n * n + i] = i % 13;
	printf("%d %ld %ld %g\n", search(v, n, 100), classify(argc > 2 ? argv[2] : "abcdef"), fib(n % 25),
	       matmul(n, m, m + n * n, m + 2 * n * n));
	free(v);
	free(m);
	return 0;
}
