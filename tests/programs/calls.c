// Calls a few functions a known number of times with known arguments; the tests' main target.
// usage: calls [N]   (N rounds, default 3)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) long add(long a, long b) { return a + b; }
__attribute__((noinline)) int greet(const char *name) { return (int)strlen(name); }
__attribute__((noinline)) void tick(int i) { (void)i; }

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  long total = 0;
  const char *names[] = {"alice", "bob", "carol"};
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < 10; ++i)
      total += add(i, r);
    greet(names[r % 3]);
    tick(r);
  }
  printf("total %ld\n", total);
  return 0;
}
