/* A call line and line rows past loader.maxLine (10^8), which a #line
 * directive gives a compiler: loader's corrupt-data tests read them.
 * Built by: gcc -O2 -g -ffile-prefix-map=$PWD=. -o bigline-gcc12-O2 bigline.c */
#include <stdlib.h>

static inline int square(int x) { return x * x; }

int main(int argc, char **argv) {
	int v = argc > 1 ? atoi(argv[1]) : argc;
#line 200000000
	return square(v) & 1;
}
