// C++ exceptions on the call path: deep(n) recurses n frames and throws
// from the bottom; main catches in its cold part (main.cold with gcc), so
// the unwinder must get the catch handler's frame right (the handler
// spins a little, so that samples land in it). Usage:
// throw [ROUNDS], default 100000.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

static volatile long sink;

__attribute__((noinline)) void deep(int n) {
	if (n == 0)
		throw std::runtime_error("bottom");
	sink += n;
	deep(n - 1);
	sink -= n;
}

int main(int argc, char **argv) {
	long rounds = argc > 1 ? atol(argv[1]) : 100000, caught = 0;
	for (long i = 0; i < rounds; i++) {
		try {
			deep(20);
		} catch (const std::exception &) {
			caught++;
			for (int k = 0; k < 3000; k++) // time in the handler itself
				sink += k;
		}
	}
	printf("caught=%ld\n", caught);
	return 0;
}
