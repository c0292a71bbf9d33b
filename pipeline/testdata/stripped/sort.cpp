// A C++ program for the stripped-code tests: std::sort's introsort and
// its heap and insertion clones, a map, virtual calls and exceptions.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct Shape {
	virtual ~Shape() = default;
	virtual double area() const = 0;
};
struct Square : Shape {
	double s;
	explicit Square(double s) : s(s) {}
	double area() const override { return s * s; }
};
struct Tri : Shape {
	double b, h;
	Tri(double b, double h) : b(b), h(h) {}
	double area() const override { return b * h / 2; }
};

__attribute__((noinline)) double total(const std::vector<std::unique_ptr<Shape>> &v) {
	double t = 0;
	for (auto &s : v)
		t += s->area();
	return t;
}

__attribute__((noinline)) std::map<std::string, int> count(const std::vector<std::string> &words) {
	std::map<std::string, int> m;
	for (auto &w : words)
		m[w]++;
	return m;
}

__attribute__((noinline)) int parse(const std::string &s) {
	if (s.empty())
		throw std::invalid_argument("empty");
	return std::stoi(s);
}

int main(int argc, char **argv) {
	std::vector<double> d;
	std::vector<int> ints;
	for (int i = 0; i < 1000 * argc; i++) {
		d.push_back((i * 7919) % 1000 / 7.0);
		ints.push_back((i * 104729) % 997);
	}
	std::sort(d.begin(), d.end());
	std::sort(ints.begin(), ints.end(), std::greater<int>());
	std::vector<std::unique_ptr<Shape>> shapes;
	for (int i = 0; i < argc * 4; i++) {
		if (i % 2)
			shapes.emplace_back(new Square(i));
		else
			shapes.emplace_back(new Tri(i, i + 1));
	}
	std::vector<std::string> words(argv, argv + argc);
	auto m = count(words);
	int p = 0;
	try {
		p = parse(argc > 1 ? argv[1] : "");
	} catch (const std::exception &e) {
		std::printf("%s\n", e.what());
	}
	std::printf("%g %d %g %zu %d\n", d[d.size() / 2], ints[0], total(shapes), m.size(), p);
	return 0;
}
