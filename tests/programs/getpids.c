// Calls getpid() N times through syscall(2) (no libc caching); the tracepoint tests' target.
// usage: getpids [N]   (default 5)
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 5;
  for (int i = 0; i < n; ++i)
    syscall(SYS_getpid);
  return 0;
}
