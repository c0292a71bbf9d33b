/* Helpers for inline.c: inlined code that lives in another file. */
#ifndef INLINE_HELPERS_H
#define INLINE_HELPERS_H

static inline unsigned mix_hash(unsigned h, unsigned v) {
  h ^= v + 0x9e3779b9u + (h << 6) + (h >> 2);
  return h * 2654435761u;
}

static inline double poly_eval(const double *coef, int deg, double x) {
  double r = 0.0;
  for (int i = deg; i >= 0; i--)
    r = r * x + coef[i];
  return r;
}

#endif
