/* Inlined from a header: its call sites lie in the primary file, its
   callee's code in this file. */
static inline int clamp(int x, int lo, int hi) {
	return x < lo ? lo : x > hi ? hi : x;
}

static inline long mix(long h, int v) {
	for (int r = 0; r < 3; r++)
		h = (h ^ v) * 1099511628211L + clamp(v, -r, r);
	return h;
}
