// A C++ workload for frame-pointer call graphs (perf record -g), built
// with frame pointers: scripts/report-bench.sh (FP=prog) records it.
// Its phases reach their hot loops through a few levels of calls, some
// of them recursive, with libstdc++'s templates inlined and libc and
// libstdc++ called: stacks of 5 to 40 frames.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

struct P {
  double x, y, z, m;
};

template <class T> static inline T sq(T v) { return v * v; }

__attribute__((noinline)) static double forces(const std::vector<P> &ps, int lo, int hi) {
  double e = 0;
  for (int i = lo; i < hi; i++)
    for (size_t j = 0; j < ps.size(); j++) {
      double d = sq(ps[i].x - ps[j].x) + sq(ps[i].y - ps[j].y) + sq(ps[i].z - ps[j].z) + 1e-3;
      e += ps[i].m * ps[j].m / std::sqrt(d);
    }
  return e;
}

// Split the range in halves down to a block: the stacks' depth varies.
__attribute__((noinline)) static double energy(const std::vector<P> &ps, int lo, int hi) {
  if (hi - lo <= 16)
    return forces(ps, lo, hi);
  int mid = lo + (hi - lo) / 2;
  return energy(ps, lo, mid) + energy(ps, mid, hi);
}

struct Node {
  int axis, lo, hi;
  Node *l, *r;
};

__attribute__((noinline)) static Node *build(std::vector<P> &ps, int lo, int hi, int depth) {
  Node *n = new Node{depth % 3, lo, hi, nullptr, nullptr};
  if (hi - lo <= 8)
    return n;
  int mid = lo + (hi - lo) / 2;
  auto key = [a = n->axis](const P &p) { return a == 0 ? p.x : a == 1 ? p.y : p.z; };
  std::nth_element(ps.begin() + lo, ps.begin() + mid, ps.begin() + hi,
                   [&](const P &a, const P &b) { return key(a) < key(b); });
  n->l = build(ps, lo, mid, depth + 1);
  n->r = build(ps, mid, hi, depth + 1);
  return n;
}

__attribute__((noinline)) static int count(const Node *n, const std::vector<P> &ps, const P &q, double r2) {
  if (!n->l) {
    int c = 0;
    for (int i = n->lo; i < n->hi; i++)
      c += sq(ps[i].x - q.x) + sq(ps[i].y - q.y) + sq(ps[i].z - q.z) < r2;
    return c;
  }
  return count(n->l, ps, q, r2) + count(n->r, ps, q, r2);
}

static void drop(Node *n) {
  if (n) {
    drop(n->l);
    drop(n->r);
    delete n;
  }
}

__attribute__((noinline)) static long words(int round, int n) {
  std::unordered_map<std::string, int> seen;
  char buf[32];
  for (int i = 0; i < n; i++) {
    std::snprintf(buf, sizeof buf, "w%d", (i * 7919 + round) % (n / 3 + 1));
    seen[buf]++;
  }
  long s = 0;
  for (auto &kv : seen)
    s += kv.second * (long)kv.first.size();
  return s;
}

__attribute__((noinline)) static double sorted(std::vector<P> ps) {
  std::sort(ps.begin(), ps.end(), [](const P &a, const P &b) { return a.x * a.m < b.x * b.m; });
  return ps[ps.size() / 2].x;
}

__attribute__((noinline)) static double step(std::vector<P> &ps, int round) {
  double e = energy(ps, 0, (int)ps.size());
  Node *t = build(ps, 0, (int)ps.size(), 0);
  int c = 0;
  for (int i = 0; i < 64; i++)
    c += count(t, ps, ps[(i * 37 + round) % ps.size()], 0.05);
  drop(t);
  for (auto &p : ps) {
    p.x = std::fmod(p.x + 0.001 * p.m, 1.0);
    p.y = std::fmod(p.y + 0.002 * p.m, 1.0);
  }
  return e + c + sorted(ps) + words(round, 20000) * 1e-9;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 100;
  std::vector<P> ps(900);
  unsigned s = 1;
  for (auto &p : ps) {
    s = s * 1103515245 + 12345;
    p = {(s >> 8 & 1023) / 1024.0, (s >> 3 & 1023) / 1024.0, (s >> 13 & 1023) / 1024.0, 1.0 + (s & 7)};
  }
  double sum = 0;
  for (int r = 0; r < rounds; r++)
    sum += step(ps, r);
  std::printf("sum=%g\n", sum);
}
