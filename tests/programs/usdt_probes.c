// USDT probes for the usdt tests (sys/sdt.h): arguments in registers, memory and constants, a
// probe inlined at two places, and one behind a semaphore that says whether a tracer is there.
// usage: usdt_probes [N]   (N rounds, default 1; a round every 100 ms after the first)
#define _SDT_HAS_SEMAPHORES 1
#include <stdlib.h>
#include <sys/sdt.h>
#include <unistd.h>

// With _SDT_HAS_SEMAPHORES every probe has one; only `watched` reads its own.
#define SEMAPHORE(name) \
  __extension__ unsigned short gpubt_##name##_semaphore __attribute__((unused, section(".probes")))
SEMAPHORE(args);
SEMAPHORE(constants);
SEMAPHORE(regs);
SEMAPHORE(twice);
SEMAPHORE(watched);

static inline __attribute__((always_inline)) void twice(int where) {
  STAP_PROBE1(gpubt, twice, where);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1;
  for (int r = 0; r < rounds; ++r) {
    if (r)
      usleep(100000);
    long big = -1234567890123;
    int small = -42;
    unsigned char byte = 200;
    STAP_PROBE4(gpubt, args, big, small, byte, r);
    STAP_PROBE2(gpubt, constants, 5, -7);
    STAP_PROBE2(gpubt, regs, (long)rounds * 3, -rounds); // values computed into registers
    twice(1);
    twice(2);
    if (gpubt_watched_semaphore)
      STAP_PROBE1(gpubt, watched, gpubt_watched_semaphore);
  }
  return 0;
}
