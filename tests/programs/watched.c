// Memory the watchpoint tests watch: a counter written through a function's pointer argument,
// and a byte at a fixed address.
// usage: watched [N]   (N rounds, default 200, 1 ms apart)
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline)) void bump(int round, int *counter) {
  (void)round;
  (*counter)++;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 200;
  volatile char *fixed = mmap((void *)0x20000000, 4096, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  int *counter = malloc(sizeof *counter);
  *counter = 0;
  for (int r = 0; r < rounds; ++r) {
    bump(r, counter);
    if (fixed != MAP_FAILED)
      fixed[0] = (char)r;
    usleep(1000);
  }
  return 0;
}
