// Passes C structs to functions the struct tests probe: fields, nested records, arrays, a char
// array, bitfields, a linked list and a pointer to a pointer.
// usage: records [N]   (N rounds, default 1)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct point {
  int x, y;
};
struct shape {
  char name[8];
  struct point origin;
  int corners[4];
  long area;
  struct shape *next;
};
struct flags {
  unsigned int low : 4, mid : 8, one : 1, high : 19;
  short neg : 5;
};

__attribute__((noinline)) int draw(struct shape *s) { return s->corners[0]; }
__attribute__((noinline)) int set_flags(struct flags *f) { return f->low; }
__attribute__((noinline)) int follow(struct shape **pp) { return (*pp)->origin.x; }

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1;
  struct shape tail = {"tail", {7, 8}, {9, 10, 11, 12}, 99, NULL};
  struct shape head = {"square", {2, 3}, {1, 2, 3, 4}, 16, &tail};
  struct shape *ptr = &head;
  struct flags f = {5, 200, 1, 70000, -3};
  int total = 0;
  for (int r = 0; r < rounds; ++r) {
    total += draw(&head);
    total += set_flags(&f);
    total += follow(&ptr);
  }
  fprintf(stderr, "total %d\n", total);
  return 0;
}
