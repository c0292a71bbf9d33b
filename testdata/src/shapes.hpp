// Shapes for tmpl.cpp: class member functions defined in a header and inlined into callers.
#ifndef SHAPES_HPP
#define SHAPES_HPP

class Rect {
 public:
  Rect(double w, double h) : w_(w), h_(h) {}
  double area() const { return w_ * h_; }
  double perimeter() const { return 2.0 * (w_ + h_); }
  void scale(double f) {
    w_ *= f;
    h_ *= f;
  }

 private:
  double w_, h_;
};

class Poly {
 public:
  explicit Poly(int sides) : sides_(sides) {}
  // A member function containing a loop, inlined into its caller's loop.
  double angle_sum() const {
    double s = 0.0;
    for (int i = 0; i < sides_; i++)
      s += 180.0 - 360.0 / sides_;
    return s;
  }
  int sides() const { return sides_; }

 private:
  int sides_;
};

#endif
