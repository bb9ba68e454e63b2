// Calls a function with more integer arguments than x86-64 passes in registers, so the last
// two go on the stack (sarg0, sarg1 and arg6, arg7 read them).
#include <stdio.h>

__attribute__((noinline)) long eight(long a, long b, long c, long d, long e, long f, long g,
                                     long h) {
  return a + b + c + d + e + f + g + h;
}

int main(void) {
  fprintf(stderr, "total %ld\n", eight(1, 2, 3, 4, 5, 6, 70, 80));
  return 0;
}
