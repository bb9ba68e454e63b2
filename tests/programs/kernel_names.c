// A program whose own types share names with the kernel's (struct file, struct path): a script
// reading them through DWARF next to kernel types from BTF must see the program's.
// usage: kernel_names
#include <stdio.h>

struct path {
  const char *name;
};
struct file {
  int fd;
  struct path path;
};

__attribute__((noinline)) int use(struct file *f) { return f->fd; }

int main(void) {
  struct file f = {42, {"here"}};
  fprintf(stderr, "%s\n", f.path.name); // faults the string's page in before the probe reads it
  fprintf(stderr, "use %d\n", use(&f));
  return 0;
}
