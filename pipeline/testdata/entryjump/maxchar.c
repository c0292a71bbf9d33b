#include <stddef.h>
#include <stdint.h>

/* The shape of python3.11d's ucs1lib_find_max_char (-Og): the loop test
   comes after the body, and the function starts with a jump to it. */
int
max_char (const unsigned char *p, const unsigned char *end)
{
  while (p < end)
    {
      if (((uintptr_t) p & 7) == 0)
        {
          const unsigned char *q = p;
          while (q + 8 <= end)
            {
              if (*(const uint64_t *) q & 0x8080808080808080ULL)
                return 255;
              q += 8;
            }
          p = q;
          if (p == end)
            break;
        }
      if (*p++ & 0x80)
        return 255;
    }
  return 127;
}

int
main (int argc, char **argv)
{
  const unsigned char *s = (const unsigned char *) argv[0];
  return max_char (s, s + argc);
}
