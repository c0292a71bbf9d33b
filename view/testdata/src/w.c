/* w.c: the synthetic profile's work (view/data_test.go). */
#include "h.h"
double work(int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    s += i * 0.5;
    s += helper(i);
  }
  return s < 0 ? -s : s;
}
