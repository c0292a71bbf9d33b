/* e_j1l.c's deval beside e_j0l.c's. */
static double
deval (double x, const double *p)
{
  double y = x + p[4];
  for (int i = 3; i >= 0; i--)
    y = y * x - p[i];
  return y;
}

void
fb (double x, const double *p, double *out)
{
  out[0] = deval (x, p);
  out[1] = deval (x * x, p);
  out[2] = deval (x + x, p);
  out[3] = deval (x - 1, p);
}
