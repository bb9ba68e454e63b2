// Calls tick() every 10 ms for N seconds (default 30): a long-lived target for -p and SIGINT tests.
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) void tick(int i) { (void)i; }

int main(int argc, char **argv) {
  int seconds = argc > 1 ? atoi(argv[1]) : 30;
  struct timespec ten_ms = {0, 10 * 1000 * 1000};
  for (int i = 0; i < seconds * 100; ++i) {
    tick(i);
    nanosleep(&ten_ms, NULL);
  }
  return 0;
}
