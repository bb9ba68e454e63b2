// Hands the tracer strings a terminal or a JSON parser would choke on: escape sequences,
// UTF-8, bytes that are not UTF-8, and a comm with an escape in it. Writes one line to stdout.
// usage: odd_strings
#include <stdio.h>
#include <sys/prctl.h>

__attribute__((noinline)) int label(const char *s) { return s[0]; }

int main(void) {
  const char *names[] = {"\x1b[31mred\x1b[0m", "caf\xc3\xa9", "\xff\xfe bytes"};
  int total = 0;
  // Touch the strings first: a probe reads nothing from a page not yet faulted in.
  for (int i = 0; i < 3; ++i)
    total += names[i][0];
  prctl(PR_SET_NAME, "esc\x1b[7mname", 0, 0, 0);
  for (int i = 0; i < 3; ++i)
    total += label(names[i]);
  printf("odd_strings done %d\n", total != 0);
  return 0;
}
