// C++: templates, std::map/std::vector, std::sort with a lambda, lambdas, inlined header members, a local class.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include "shapes.hpp"

template <typename T, int N> struct Acc {
  T v[N] = {};
  void add(const T *x) {
    for (int i = 0; i < N; i++) v[i] += x[i];
  }
  T total() const {
    T s = T();
    for (int i = 0; i < N; i++) s += v[i];
    return s;
  }
};

template <typename T> static T clamp_sum(const std::vector<T> &xs, T lo, T hi) {
  T s = T();
  for (const T &x : xs) s += std::min(hi, std::max(lo, x));
  return s;
}

static std::map<int, int> histogram(const std::vector<int> &xs, int buckets) {
  std::map<int, int> h;
  for (int x : xs) h[x % buckets]++;
  return h;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 2000;
  int seed = argc > 2 ? std::atoi(argv[2]) : 11;
  if (n < 1) n = 1;

  std::vector<int> xs(n);
  unsigned r = seed;
  for (int &x : xs) x = (r = r * 1664525u + 1013904223u) >> 20;

  int pivot = seed * 100;
  std::sort(xs.begin(), xs.end(), [pivot](int a, int b) {
    int da = a > pivot ? a - pivot : pivot - a, db = b > pivot ? b - pivot : pivot - b;
    return da != db ? da < db : a < b;
  });

  std::map<int, int> h = histogram(xs, 16);
  long hsum = 0;
  for (const auto &kv : h) hsum += (long)kv.first * kv.second;

  Acc<double, 4> acc;
  double row[4];
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < 4; k++) row[k] = xs[i] * 0.001 + k;
    acc.add(row);
  }

  std::vector<Rect> rects;
  for (int i = 1; i <= 64; i++) rects.emplace_back(i * 0.5, (i % 7) + 1.0);
  double area = 0, perim = 0, angles = 0;
  for (Rect &rc : rects) {
    rc.scale(1.5);
    area += rc.area();
    perim += rc.perimeter();
  }
  for (int s = 3; s < 3 + (n % 50) + 10; s++) angles += Poly(s).angle_sum();

  // A class declared inside a function.
  struct Counter {
    int hits = 0;
    void see(int x, int lim) { hits += x < lim; }
  } counter;
  auto see_all = [&counter](const std::vector<int> &v, int lim) {
    for (int x : v) counter.see(x, lim);
  };
  see_all(xs, pivot);

  long cs = clamp_sum<int>(xs, 100, 3000);
  std::printf("first=%d hsum=%ld acc=%.3f area=%.1f perim=%.1f angles=%.1f hits=%d cs=%ld\n", xs[0],
              hsum, acc.total(), area, perim, angles, counter.hits, cs);
  return 0;
}
