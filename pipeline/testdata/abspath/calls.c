/* Call sites in the primary source file of inlined functions of this
   file and of a header, for the compat tests of sources named by an
   absolute path (pipeline/TestCompatAbsolutePath). */
#include <stdio.h>
#include <stdlib.h>
#include "util.h"

static inline int square(int x) { return x * x; }

static inline long sum_squares(const int *v, int n) {
	long s = 0;
	for (int i = 0; i < n; i++)
		s += square(clamp(v[i], -100, 100));
	return s;
}

__attribute__((noinline)) long hash(const int *v, int n) {
	long h = 14695981039346656037UL;
	for (int i = 0; i < n; i++)
		h = mix(h, v[i]);
	return h;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 100;
	int *v = malloc(n * sizeof *v);
	if (!v)
		return 1;
	for (int i = 0; i < n; i++)
		v[i] = square(i) % 211 - 105;
	printf("%ld %ld\n", sum_squares(v, n), hash(v, n));
	free(v);
	return 0;
}
