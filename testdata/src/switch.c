/* A dense switch (10 cases) inside a loop, lowered to a jump table by gcc and clang. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static long interpret(const unsigned char *code, int n, long x) {
  long acc = 0;
  for (int pc = 0; pc < n; pc++) {
    switch (code[pc]) {
    case 0: acc += x; break;
    case 1: acc -= x * 3; break;
    case 2: acc ^= x << 2; break;
    case 3: acc = acc * 7 + 1; break;
    case 4: x = x / 2 + 1; break;
    case 5: x += acc & 0xff; break;
    case 6: acc = -acc; break;
    case 7: x = x * 5 - acc % 13; break;
    case 8: acc += pc; break;
    case 9: x ^= 0x5a5a; break;
    default: acc--; break;
    }
  }
  return acc + x;
}

int main(int argc, char **argv) {
  int seed = argc > 1 ? atoi(argv[1]) : 17;
  int n = argc > 2 ? atoi(argv[2]) : 4096;
  if (n <= 0 || n > 1 << 20)
    n = 4096;
  unsigned char *code = malloc((size_t)n);
  if (!code)
    return 1;
  unsigned r = (unsigned)seed;
  for (int i = 0; i < n; i++) {
    r = r * 1103515245u + 12345u;
    code[i] = (unsigned char)((r >> 16) % 11);
  }
  long total = 0;
  for (int round = 0; round < 50; round++)
    total += interpret(code, n, seed + round);
  printf("total=%ld\n", total);
  free(code);
  return 0;
}
