// Benchmark target: calls target(i % 16, i*3 % 1024) N times and prints the loop's ns per call to stderr.
// usage: loop N
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define F(n) __attribute__((noinline)) long f##n(long a) { return a + n; }
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9)

__attribute__((noinline)) long target(long a, long b) {
  __asm__ volatile("");
  return a ^ b;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 2000000;
  struct timespec t0, t1;
  long acc = 0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < n; ++i)
    acc += target(i & 15, (i * 3) & 1023);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
  fprintf(stderr, "ns_per_call %.1f acc %ld\n", ns / n, acc + f0(0) + f9(0));
  return 0;
}
