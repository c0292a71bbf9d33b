/* m.c: the synthetic profile's main (view/data_test.go); names < & " */
#include <vector>
int main(void) {
  work(1000);
  std::vector<int> v; v.push_back(1);
  std::cout << "x";
}
struct x {};
std::ostream &operator<<(std::ostream &o, const x &) {
  return o << "<&>";
}
