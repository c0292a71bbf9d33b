/* Declared so here, a call of stop ends fa; its body's indirect jump
   returns for Dyninst, whose parse of fa runs on into fb. */
extern void stop (void) __attribute__ ((noreturn));

/* Horner's rule over a fixed degree, as glibc's e_j0l.c writes its
   deval. Its loop is on a later line than b.c's deval's. */
static double
deval (double x, const double *p)
{
  double y = p[4];
  for (int i = 3; i >= 0; i--)
    y = y * x + p[i];
  return y;
}

void
fa (double x, const double *p, double *out)
{
  out[0] = deval (x, p);
  out[1] = deval (x * x, p);
  out[2] = deval (x + x, p);
  out[3] = deval (x - 1, p);
  stop ();
}
