// Loads a library with dlopen() once running, as PyTorch loads its own libcudart:
// `dlopen_calls LIB FUNC N [DELAY_S [AFTER_S]]` sleeps DELAY_S, dlopens LIB, calls
// int FUNC(void **, size_t) N times with 4096 (N = 0: only loads LIB), then sleeps AFTER_S.
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int (*alloc_fn)(void **, size_t);

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: dlopen_calls LIB FUNC N [DELAY_S]\n");
    return 2;
  }
  if (argc > 4)
    sleep(atoi(argv[4]));
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  int n = atoi(argv[3]);
  alloc_fn fn = n > 0 ? (alloc_fn)dlsym(lib, argv[2]) : NULL;
  if (n > 0 && !fn) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  for (int i = 0; i < n; ++i) {
    void *p = NULL;
    fn(&p, 4096);
  }
  if (argc > 5)
    sleep(atoi(argv[5]));
  return 0;
}
