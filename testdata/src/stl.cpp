// C++ STL algorithms and containers: std::sort/stable_sort/nth_element on doubles, unordered_map, priority_queue, deque, std::accumulate/transform/find_if/partial_sum.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <numeric>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

struct Item {
  int key;
  double weight;
};

static std::vector<double> make_values(int n, unsigned seed) {
  std::vector<double> v(n);
  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (seed >> 8) % 10007 / 7.0;
  }
  return v;
}

__attribute__((noinline)) double sorted_median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

__attribute__((noinline)) double nth_median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

__attribute__((noinline)) int stable_by_weight(std::vector<Item> &items) {
  std::stable_sort(items.begin(), items.end(),
                   [](const Item &a, const Item &b) { return a.weight < b.weight; });
  int inversions = 0;
  for (size_t i = 1; i < items.size(); i++)
    if (items[i - 1].key > items[i].key) inversions++;
  return inversions;
}

__attribute__((noinline)) std::unordered_map<std::string, int> word_counts(int n) {
  static const char *words[] = {"alpha", "beta", "gamma", "delta", "eps"};
  std::unordered_map<std::string, int> counts;
  for (int i = 0; i < n; i++) counts[words[(i * 7) % 5]] += i % 3;
  return counts;
}

__attribute__((noinline)) long top_k_sum(const std::vector<double> &v, int k) {
  std::priority_queue<double, std::vector<double>, std::greater<double>> heap;
  for (double x : v) {
    heap.push(x);
    if ((int)heap.size() > k) heap.pop();
  }
  long s = 0;
  while (!heap.empty()) {
    s += (long)heap.top();
    heap.pop();
  }
  return s;
}

__attribute__((noinline)) double window_max_sum(const std::vector<double> &v, size_t w) {
  std::deque<size_t> dq;
  double s = 0;
  for (size_t i = 0; i < v.size(); i++) {
    while (!dq.empty() && v[dq.back()] <= v[i]) dq.pop_back();
    dq.push_back(i);
    if (dq.front() + w <= i) dq.pop_front();
    if (i + 1 >= w) s += v[dq.front()];
  }
  return s;
}

__attribute__((noinline)) double transform_reduce(const std::vector<double> &v, double scale) {
  std::vector<double> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [scale](double x) { return x * scale + 1; });
  std::partial_sum(out.begin(), out.end(), out.begin());
  auto it = std::find_if(out.begin(), out.end(), [](double x) { return x > 1000.0; });
  return std::accumulate(out.begin(), it, 0.0);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  int k = argc > 2 ? atoi(argv[2]) : 10;
  std::vector<double> v = make_values(n, 42);
  std::vector<Item> items;
  for (int i = 0; i < n; i++) items.push_back(Item{i, v[(i * 31) % n]});
  auto counts = word_counts(n);
  long words = 0;
  for (const auto &kv : counts) words += kv.second * (long)kv.first.size();
  printf("%.3f %.3f %d %ld %ld %.3f %.3f\n", sorted_median(v), nth_median(v),
         stable_by_weight(items), words, top_k_sum(v, k), window_max_sum(v, 16),
         transform_reduce(v, 0.5));
  return 0;
}
