/* dlopen: the time is spent in libm.so.6, which the program does not link
 * but loads at run time, so the profiler must see the late mapping. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 20000000;
  void *h = dlopen("libm.so.6", RTLD_NOW);
  if (!h) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  double (*f)(double) = (double (*)(double))dlsym(h, "cbrt");
  volatile double s = 0;
  for (long i = 0; i < n; i++)
    s += f((double)i);
  printf("%g\n", s);
  return 0;
}
