// Calls a few functions a known number of times with known arguments; the tests' main target.
// usage: calls [N]   (N rounds, default 3)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) long add(long a, long b) { return a + b; }
__attribute__((noinline)) int greet(const char *name) { return (int)strlen(name); }
__attribute__((noinline)) void tick(int i) { (void)i; }
__attribute__((noinline)) long neg(long v) { return -v; }

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  long total = 0;
  const char *names[] = {"alice", "bob", "carol"};
  // Touch the strings first: bpftrace 0.17 reads nothing from a page not yet faulted in, and
  // the differential tests must not depend on that bug.
  for (int i = 0; i < 3; ++i)
    total += names[i][0];
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < 10; ++i)
      total += add(i, r);
    greet(names[r % 3]);
    tick(r);
    total += neg(r * 1000);
    syscall(SYS_getppid);
  }
  fprintf(stderr, "total %ld\n", total);
  return 0;
}
