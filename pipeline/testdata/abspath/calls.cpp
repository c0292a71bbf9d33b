// C++ call sites in the primary source file of inlined templates, lambdas
// and a header's functions (pipeline/TestCompatAbsolutePath).
#include <algorithm>
#include <cstdio>
#include <vector>
#include "util.h"

template <typename T> static inline T twice(T x) { return x + x; }

struct Acc {
	long h = 0;
	void add(int v) { h = mix(h, twice(v)); }
};

__attribute__((noinline)) long run(std::vector<int> &v) {
	std::sort(v.begin(), v.end(), [](int a, int b) { return clamp(a, -50, 50) < clamp(b, -50, 50); });
	Acc a;
	for (int x : v)
		a.add(x);
	return a.h;
}

int main(int argc, char **) {
	std::vector<int> v;
	for (int i = 0; i < 200 * argc; i++)
		v.push_back(twice(i) % 97 - 48);
	std::printf("%ld\n", run(v));
	return 0;
}
