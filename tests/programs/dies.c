// Ends badly on purpose, for the tests of how gpubt reports its -c program's end:
// `dies segv` and `dies abort` raise those signals, `dies exit N` exits with status N.
#include <signal.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void about_to_die(int how) { (void)how; }

int main(int argc, char **argv) {
  const char *how = argc > 1 ? argv[1] : "segv";
  about_to_die(how[0]);
  if (strcmp(how, "abort") == 0)
    raise(SIGABRT);
  else if (strcmp(how, "exit") == 0)
    return argc > 2 ? atoi(argv[2]) : 1;
  else
    raise(SIGSEGV);
  return 0;
}
