#include <stdlib.h>

void fa (double, const double *, double *);
void fb (double, const double *, double *);
/* stop ends in a jump through this pointer, which Dyninst cannot
   resolve: stop returns for it. */
void (*volatile stop_hook) (int) = exit;

void
stop (void)
{
  stop_hook (0);
}

int
main (int argc, char **argv)
{
  double p[5] = { 1, 2, 3, 4, 5 }, o[4];
  fb (argc, p, o);
  if (argc > 2)
    fa (argc, p, o);
  return (int) o[1];
}
