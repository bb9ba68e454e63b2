// Parser tests: script -> AST dump, bad script -> the whole diagnostic text (bpftrace's words).
#include <gtest/gtest.h>

#include <chrono>

#include "frontend/ast_dump.h"
#include "frontend/parse/parse.h"

namespace gpubt::frontend {
namespace {

// The dump of a script that must parse, or its diagnostics if it did not.
std::string parse(const std::string &text) {
  SourceFile file("stdin", text);
  Diagnostics diags;
  auto prog = parse_program(file, diags);
  if (!prog)
    return diags.render(file);
  return dump_ast(*prog);
}

// The diagnostics of a script that must not parse.
std::string error(const std::string &text) {
  SourceFile file("stdin", text);
  Diagnostics diags;
  auto prog = parse_program(file, diags);
  EXPECT_EQ(prog, nullptr);
  EXPECT_TRUE(diags.has_errors());
  return diags.render(file);
}

TEST(Parser, MissionExampleWithAngleBody) {
  EXPECT_EQ(parse("gpu:kretprobe:vectorAdd < @[tid] = count(); >"),
            "Program\n"
            " Probe gpu:kretprobe:vectorAdd <>\n"
            "  (= (map @ (builtin tid)) (call count))\n");
}

TEST(Parser, PredicateAndMapAssign) {
  EXPECT_EQ(parse("uprobe:./app:foo /pid == 42/ { @x[tid] = count(); }"),
            "Program\n"
            " Probe uprobe:./app:foo\n"
            "  predicate (== (builtin pid) (int 42))\n"
            "  (= (map @x (builtin tid)) (call count))\n");
}

TEST(Parser, Precedence) {
  EXPECT_EQ(parse("BEGIN { $a = 1 + 2 * 3; $b = $x < $y == $z; }"),
            "Program\n"
            " Probe BEGIN\n"
            "  (= (var $a) (+ (int 1) (* (int 2) (int 3))))\n"
            "  (= (var $b) (== (< (var $x) (var $y)) (var $z)))\n");
}

TEST(Parser, SyntaxErrorLikeBpftrace) {
  EXPECT_EQ(error("BEGIN { @x = 1 +; }"), "stdin:1:16-18: ERROR: syntax error, unexpected ;\n"
                                          "BEGIN { @x = 1 +; }\n"
                                          "               ~~\n");
}

TEST(Parser, MultiAttachSpanningLines) {
  EXPECT_EQ(parse("BEGIN,\nEND\n{ }"), "Program\n Probe BEGIN, END\n");
}

TEST(Parser, CommentsAnywhere) {
  EXPECT_EQ(parse("// leading\n/* c */ BEGIN /* x */ { // y\n @x = 1; /* z */ }\n// end"),
            "Program\n"
            " Probe BEGIN\n"
            "  (= (map @x) (int 1))\n");
}

TEST(Parser, CompactSpelling) {
  EXPECT_EQ(parse("BEGIN{@x=1}END{@y=2}"), "Program\n"
                                           " Probe BEGIN\n"
                                           "  (= (map @x) (int 1))\n"
                                           " Probe END\n"
                                           "  (= (map @y) (int 2))\n");
  EXPECT_EQ(parse("BEGIN /pid/{ }"), "Program\n Probe BEGIN\n  predicate (builtin pid)\n");
}

TEST(Parser, TracepointArgsBothSpellings) {
  EXPECT_EQ(
      parse("tracepoint:syscalls:sys_enter_openat { @[comm] = count(); "
            "printf(\"%d %d\\n\", args->flags, args.dfd); }"),
      "Program\n"
      " Probe tracepoint:syscalls:sys_enter_openat\n"
      "  (= (map @ (builtin comm)) (call count))\n"
      "  (call printf (string \"%d %d\\n\") (. (builtin args) flags) (. (builtin args) dfd))\n");
}

TEST(Parser, AttachPointForms) {
  EXPECT_EQ(parse("host:uprobe:libc:malloc, u:cudart:cuda*, ur:./app:f?o, t:sched:sched_switch, "
                  "uprobe:/usr/lib/x86_64-linux-gnu/libc.so.6:free, uprobe:../x/y:ns::foo, "
                  "gpu:kprobe:*gemm*, gpu:kretprobe:_Z6vectorAddPfS_S_i { }"),
            "Program\n"
            " Probe host:uprobe:libc:malloc, uprobe:cudart:cuda*, uretprobe:./app:f?o, "
            "tracepoint:sched:sched_switch, uprobe:/usr/lib/x86_64-linux-gnu/libc.so.6:free, "
            "uprobe:../x/y:ns::foo, gpu:kprobe:*gemm*, gpu:kretprobe:_Z6vectorAddPfS_S_i\n");
}

TEST(Parser, AttachPointFields) {
  SourceFile file("stdin", "host:uprobe:\"/a b/c\":f*, i:ms:100, interval:us:5, interval:hz:100,"
                           "\n  gpu:kretprobe:k { }");
  Diagnostics diags;
  auto prog = parse_program(file, diags);
  ASSERT_NE(prog, nullptr) << diags.render(file);
  const auto &aps = prog->probes[0]->attach_points;
  ASSERT_EQ(aps.size(), 5u);
  EXPECT_EQ(aps[0].provider, Provider::Uprobe);
  EXPECT_TRUE(aps[0].host_prefix);
  EXPECT_EQ(aps[0].target, "/a b/c");
  EXPECT_EQ(aps[0].func, "f*");
  EXPECT_EQ(aps[0].raw, "host:uprobe:\"/a b/c\":f*");
  EXPECT_EQ(aps[1].provider, Provider::Interval);
  EXPECT_EQ(aps[1].interval_ns, 100000000u);
  EXPECT_EQ(aps[2].interval_ns, 5000u);
  EXPECT_EQ(aps[3].interval_ns, 10000000u);
  EXPECT_EQ(aps[4].provider, Provider::GpuKretprobe);
  EXPECT_FALSE(aps[4].host_prefix);
  EXPECT_EQ(aps[4].func, "k");
  EXPECT_EQ(aps[4].span.line, 2u);
  EXPECT_EQ(aps[4].span.col, 3u);
  EXPECT_EQ(aps[4].span.end_col, 18u);
}

// gpu:hang:KERNEL[:DURATION] (issue 26): a last part that starts with a digit is the duration,
// default 2s; the kernel pattern keeps C++'s "::".
TEST(Parser, GpuHangAttachPoints) {
  SourceFile file("stdin", "gpu:hang:spin*, gpu:hang:ns::k:500ms, gpu:hang:\"f(int)\":3s { }");
  Diagnostics diags;
  auto prog = parse_program(file, diags);
  ASSERT_NE(prog, nullptr) << diags.render(file);
  const auto &aps = prog->probes[0]->attach_points;
  ASSERT_EQ(aps.size(), 3u);
  EXPECT_EQ(aps[0].provider, Provider::GpuHang);
  EXPECT_EQ(aps[0].func, "spin*");
  EXPECT_EQ(aps[0].interval_ns, 2000000000u);
  EXPECT_EQ(aps[0].name(), "gpu:hang:spin*");
  EXPECT_EQ(aps[1].func, "ns::k");
  EXPECT_EQ(aps[1].interval_ns, 500000000u);
  EXPECT_EQ(aps[1].name(), "gpu:hang:ns::k:500ms");
  EXPECT_EQ(aps[2].func, "f(int)");
  EXPECT_EQ(aps[2].interval_ns, 3000000000u);
}

// gpu:{mem,load,store,atomic}[:SPACE]:KERNEL and gpu:barrier:KERNEL (issue 28): the access word
// in target, the space in ns; a lone part after the word is the kernel, even `global`.
TEST(Parser, GpuMemoryAndBarrierAttachPoints) {
  SourceFile file("stdin", "gpu:load:global:ns::k*, gpu:mem:k, gpu:atomic:shared:k, "
                           "gpu:store:global, gpu:barrier:\"f(int)\" { }");
  Diagnostics diags;
  auto prog = parse_program(file, diags);
  ASSERT_NE(prog, nullptr) << diags.render(file);
  const auto &aps = prog->probes[0]->attach_points;
  ASSERT_EQ(aps.size(), 5u);
  EXPECT_EQ(aps[0].provider, Provider::GpuMemory);
  EXPECT_EQ(aps[0].target, "load");
  EXPECT_EQ(aps[0].ns, "global");
  EXPECT_EQ(aps[0].func, "ns::k*");
  EXPECT_EQ(aps[0].name(), "gpu:load:global:ns::k*");
  EXPECT_EQ(aps[1].name(), "gpu:mem:k");
  EXPECT_EQ(aps[1].ns, "");
  EXPECT_EQ(aps[2].name(), "gpu:atomic:shared:k");
  EXPECT_EQ(aps[3].ns, "");
  EXPECT_EQ(aps[3].func, "global");
  EXPECT_EQ(aps[4].provider, Provider::GpuBarrier);
  EXPECT_EQ(aps[4].func, "f(int)");
  EXPECT_EQ(aps[4].name(), "gpu:barrier:f(int)");
}

TEST(ParserErrors, GpuMemoryAttachPoints) {
  EXPECT_EQ(error("gpu:load { }"), "stdin:1:1-9: ERROR: gpu:load probe type requires 1 argument\n"
                                   "gpu:load { }\n"
                                   "~~~~~~~~\n");
  EXPECT_EQ(error("host:gpu:mem:k { }"), "stdin:1:1-15: ERROR: host: cannot prefix a gpu probe\n"
                                         "host:gpu:mem:k { }\n"
                                         "~~~~~~~~~~~~~~\n");
  EXPECT_EQ(error("gpu:barier:k { }"),
            "stdin:1:5-11: ERROR: Invalid gpu probe type: barier (did you mean 'barrier'?)\n"
            "gpu:barier:k { }\n"
            "    ~~~~~~\n");
  EXPECT_EQ(error("gpu:lod:k { }"),
            "stdin:1:5-8: ERROR: Invalid gpu probe type: lod (gpu probes are gpu:kprobe, "
            "gpu:kretprobe, gpu:block_begin, gpu:block_end, gpu:hang, gpu:mem, gpu:load, "
            "gpu:store, gpu:atomic and gpu:barrier)\n"
            "gpu:lod:k { }\n"
            "    ~~~\n");
}

TEST(ParserErrors, GpuHangAttachPoints) {
  EXPECT_EQ(error("gpu:hang:spin:5x { }"),
            "stdin:1:1-17: ERROR: gpu:hang: invalid duration '5x', expected a positive count and "
            "a unit (s, ms, us, ns): 500ms, 3s\n"
            "gpu:hang:spin:5x { }\n"
            "~~~~~~~~~~~~~~~~\n");
  EXPECT_EQ(error("gpu:hang:spin:0ms { }"),
            "stdin:1:1-18: ERROR: gpu:hang: invalid duration '0ms', expected a positive count and "
            "a unit (s, ms, us, ns): 500ms, 3s\n"
            "gpu:hang:spin:0ms { }\n"
            "~~~~~~~~~~~~~~~~~\n");
  EXPECT_EQ(error("gpu:hang { }"), "stdin:1:1-9: ERROR: gpu:hang probe type requires 1 argument\n"
                                   "gpu:hang { }\n"
                                   "~~~~~~~~\n");
  EXPECT_EQ(error("host:gpu:hang:k { }"), "stdin:1:1-16: ERROR: host: cannot prefix a gpu probe\n"
                                          "host:gpu:hang:k { }\n"
                                          "~~~~~~~~~~~~~~~\n");
  EXPECT_EQ(error("gpu:hanng:k { }"),
            "stdin:1:5-10: ERROR: Invalid gpu probe type: hanng (did you mean 'hang'?)\n"
            "gpu:hanng:k { }\n"
            "    ~~~~~\n");
}

// usdt:FILE:[PROVIDER:]NAME: FILE may be empty (-p's files), PROVIDER omitted or empty (any),
// a quoted NAME may hold \" (a probe named with quotes); software:EVENT[:COUNT].
TEST(Parser, UsdtAndPerfEventAttachPoints) {
  SourceFile file("stdin", "usdt:./a:p:n, U::p:*x, usdt:./a:n, usdt:./a:p:\"\\\"q\\\"\", "
                           "software:faults:10, s:cs, hardware:cycles: { }");
  Diagnostics diags;
  auto prog = parse_program(file, diags);
  ASSERT_NE(prog, nullptr) << diags.render(file);
  const auto &aps = prog->probes[0]->attach_points;
  ASSERT_EQ(aps.size(), 7u);
  EXPECT_EQ(aps[0].provider, Provider::Usdt);
  EXPECT_EQ(aps[0].name(), "usdt:./a:p:n");
  EXPECT_EQ(aps[1].target, "");
  EXPECT_EQ(aps[1].ns, "p");
  EXPECT_EQ(aps[1].func, "*x");
  EXPECT_EQ(aps[2].ns, "");
  EXPECT_EQ(aps[2].func, "n");
  EXPECT_EQ(aps[3].func, "\"q\"");
  EXPECT_EQ(aps[4].provider, Provider::Software);
  EXPECT_EQ(aps[4].target, "faults");
  EXPECT_EQ(aps[4].interval_ns, 10u);
  EXPECT_EQ(aps[5].name(), "software:cs:");
  EXPECT_EQ(aps[6].provider, Provider::Hardware);
  EXPECT_EQ(aps[6].interval_ns, 0u);
}

TEST(Parser, WatchpointAttachPoints) {
  SourceFile file("stdin", "watchpoint:0x10:8:rw, aw:incr+arg1:4:w { }");
  Diagnostics diags;
  auto prog = parse_program(file, diags);
  ASSERT_NE(prog, nullptr) << diags.render(file);
  const auto &aps = prog->probes[0]->attach_points;
  ASSERT_EQ(aps.size(), 2u);
  EXPECT_EQ(aps[0].provider, Provider::Watchpoint);
  EXPECT_EQ(aps[0].watch.address, 16u);
  EXPECT_EQ(aps[0].watch.arg, -1);
  EXPECT_EQ(aps[0].name(), "watchpoint:16:8:rw");
  EXPECT_EQ(aps[1].provider, Provider::AsyncWatchpoint);
  EXPECT_EQ(aps[1].func, "incr");
  EXPECT_EQ(aps[1].watch.arg, 1);
  EXPECT_EQ(aps[1].watch.length, 4u);
  EXPECT_EQ(aps[1].name(), "asyncwatchpoint:incr:4:w");
}

TEST(Parser, TuplesCastsAndNegativeLiterals) {
  EXPECT_EQ(parse("BEGIN { $t = (1, \"a\", (2, 3)); $x = $t.2.0; @y = (uint32)$x + (int8)-1; }"),
            "Program\n"
            " Probe BEGIN\n"
            "  (= (var $t) (tuple (int 1) (string \"a\") (tuple (int 2) (int 3))))\n"
            "  (= (var $x) (. (. (var $t) 2) 0))\n"
            "  (= (map @y) (+ (cast uint32 (var $x)) (cast int8 (int -1))))\n");
}

TEST(Parser, ElseIfChain) {
  EXPECT_EQ(parse("BEGIN { if ($x > 1) { @a = 1; } else if ($x < 0) { @b = 1 } else { @c = 1 } "
                  "@d = 1 }"),
            "Program\n"
            " Probe BEGIN\n"
            "  if (> (var $x) (int 1))\n"
            "   (= (map @a) (int 1))\n"
            "  else\n"
            "   if (< (var $x) (int 0))\n"
            "    (= (map @b) (int 1))\n"
            "   else\n"
            "    (= (map @c) (int 1))\n"
            "  (= (map @d) (int 1))\n");
}

TEST(Parser, WhileLoop) {
  EXPECT_EQ(parse("BEGIN { $a = 0; while ($a <= 100) { @=avg($a++) } exit(); }"),
            "Program\n"
            " Probe BEGIN\n"
            "  (= (var $a) (int 0))\n"
            "  while (<= (var $a) (int 100))\n"
            "   (= (map @) (call avg (post++ (var $a))))\n"
            "  (call exit)\n");
}

// Newer bpftrace's statements (issue 29): a for range is built as a declared loop variable, its
// end, and a while loop with a step; `let`; jumps; `if` without parentheses; lowercase begin.
TEST(Parser, ForRangeLetAndJumps) {
  EXPECT_EQ(parse("begin { let $n = 3; for ($i : 0..$n) { if $i == 1 { continue; } break } "
                  "return; }"),
            "Program\n"
            " Probe begin\n"
            "  let (= (var $n) (int 3))\n"
            "  block\n"
            "   let (= (var $i) (int 0))\n"
            "   let (= (var $i.end) (var $n))\n"
            "   while (< (var $i) (var $i.end))\n"
            "    if (== (var $i) (int 1))\n"
            "     continue\n"
            "    break\n"
            "   step\n"
            "    (+= (var $i) (int 1))\n"
            "  return\n");
}

TEST(Parser, DurationAndSuffixedLiterals) {
  EXPECT_EQ(parse("BEGIN { @ = (1ns, 2us, 3ms, 4s, 1m, 1h, 1d, 10UL, 0x10u, true, false); }"),
            "Program\n"
            " Probe BEGIN\n"
            "  (= (map @) (tuple (int 1) (int 2000) (int 3000000) (int 4000000000) "
            "(int 60000000000) (int 3600000000000) (int 86400000000000) (int 10) (int 16) "
            "(int 1) (int 0)))\n");
}

TEST(ParserErrors, ScopesLikeBpftrace) {
  EXPECT_EQ(error("begin { let $x = 1; { let $x = 2 } }"),
            "stdin:1:23-29: ERROR: Variable $x was already declared. Variable shadowing is not "
            "allowed.\n"
            "begin { let $x = 1; { let $x = 2 } }\n"
            "                      ~~~~~~\n"
            "stdin:1:9-15: ERROR: This is the initial declaration.\n"
            "begin { let $x = 1; { let $x = 2 } }\n"
            "        ~~~~~~\n");
  EXPECT_EQ(error("begin { $i = 5; for ($i : 1..10) { print($i) } }"),
            "stdin:1:22-24: ERROR: Loop declaration shadows existing variable: $i\n"
            "begin { $i = 5; for ($i : 1..10) { print($i) } }\n"
            "                     ~~\n"
            "stdin:1:9-11: ERROR: This is the initial assignment.\n"
            "begin { $i = 5; for ($i : 1..10) { print($i) } }\n"
            "        ~~\n");
  // Declarations in sibling blocks, and 0.17's probe-wide variables, are fine.
  EXPECT_EQ(parse("begin { if (1) { let $x = 1 } else { let $x = 2 } }").substr(0, 7), "Program");
  EXPECT_EQ(parse("begin { if (1) { $a = 1 } else { $a = 2 } print($a) }").substr(0, 7), "Program");
}

TEST(Parser, TernaryNesting) {
  EXPECT_EQ(
      parse("BEGIN { @x = $a ? $b ? 1 : 2 : $c ? 3 : 4; @y = 1 ? 2 : 3 ? 4 : 5; }"),
      "Program\n"
      " Probe BEGIN\n"
      "  (= (map @x) (? (var $a) (? (var $b) (int 1) (int 2)) (? (var $c) (int 3) (int 4))))\n"
      "  (= (map @y) (? (int 1) (int 2) (? (int 3) (int 4) (int 5))))\n");
}

TEST(Parser, BinaryPrecedenceLadder) {
  EXPECT_EQ(parse("BEGIN { @x = 1 & 2 | 3 ^ 4 && 5 || 6 << 1 >> 2 % 3; @y = 1 - 2 - 3; "
                  "@z = -$a * !$b; }"),
            "Program\n"
            " Probe BEGIN\n"
            "  (= (map @x) (|| (&& (| (& (int 1) (int 2)) (^ (int 3) (int 4))) (int 5)) "
            "(>> (<< (int 6) (int 1)) (% (int 2) (int 3)))))\n"
            "  (= (map @y) (- (- (int 1) (int 2)) (int 3)))\n"
            "  (= (map @z) (* (- (var $a)) (! (var $b))))\n");
}

TEST(Parser, IntegerLiterals) {
  EXPECT_EQ(parse("BEGIN { @x = 0x1f + 010 + 1_000 + 1e3 + -5 - -1 + ~1; "
                  "@min = -9223372036854775808; @max = 18446744073709551615; }"),
            "Program\n"
            " Probe BEGIN\n"
            "  (= (map @x) (+ (- (+ (+ (+ (+ (int 31) (int 8)) (int 1000)) (int 1000)) (int -5)) "
            "(int -1)) (~ (int 1))))\n"
            "  (= (map @min) (int -9223372036854775808))\n"
            "  (= (map @max) (int -1))\n");
}

TEST(Parser, StringEscapes) {
  EXPECT_EQ(parse(R"(BEGIN { printf("\t\"q\"\\ \x41\101\0z\r\n"); })"),
            "Program\n"
            " Probe BEGIN\n"
            "  (call printf (string \"\\t\\\"q\\\"\\\\ AA\\x00z\\r\\n\"))\n");
}

TEST(Parser, CompoundAssignment) {
  EXPECT_EQ(parse("BEGIN { $a -= 1; $a *= 2; $a /= 3; $a %= 4; $a &= 5; $a |= 6; $a ^= 7; "
                  "$a <<= 8; $a >>= 9; @m[1, 2] += 2; @ = 1; @[1] = 2 }"),
            "Program\n"
            " Probe BEGIN\n"
            "  (-= (var $a) (int 1))\n"
            "  (*= (var $a) (int 2))\n"
            "  (/= (var $a) (int 3))\n"
            "  (%= (var $a) (int 4))\n"
            "  (&= (var $a) (int 5))\n"
            "  (|= (var $a) (int 6))\n"
            "  (^= (var $a) (int 7))\n"
            "  (<<= (var $a) (int 8))\n"
            "  (>>= (var $a) (int 9))\n"
            "  (+= (map @m (int 1) (int 2)) (int 2))\n"
            "  (= (map @) (int 1))\n"
            "  (= (map @ (int 1)) (int 2))\n");
}

TEST(Parser, IncrementDecrement) {
  EXPECT_EQ(parse("BEGIN { @x++; ++@x; @x--; --@x; $y++; --$y; @z[1]++ }"),
            "Program\n"
            " Probe BEGIN\n"
            "  (post++ (map @x))\n"
            "  (pre++ (map @x))\n"
            "  (post-- (map @x))\n"
            "  (pre-- (map @x))\n"
            "  (post++ (var $y))\n"
            "  (pre-- (var $y))\n"
            "  (post++ (map @z (int 1)))\n");
}

TEST(Parser, CallsAndMapFunctions) {
  EXPECT_EQ(parse("END { print(@); clear(@m); delete(@x[1]); exit(); }"),
            "Program\n"
            " Probe END\n"
            "  (call print (map @))\n"
            "  (call clear (map @m))\n"
            "  (call delete (map @x (int 1)))\n"
            "  (call exit)\n");
}

TEST(Parser, UnknownNamesAreBuiltinsForTheSemanticPass) {
  EXPECT_EQ(parse("BEGIN { @x = tid_x + no_such_builtin; no_such_call(1); }"),
            "Program\n"
            " Probe BEGIN\n"
            "  (= (map @x) (+ (builtin tid_x) (builtin no_such_builtin)))\n"
            "  (call no_such_call (int 1))\n");
}

TEST(Parser, AngleBodyComparisons) {
  EXPECT_EQ(parse("gpu:kprobe:k < if ($x > 1) { @big = count(); } @b = ($x > 1); "
                  "@c = $x >= 1; @d = $x < 2; @e[$x > 0] = 1; >"),
            "Program\n"
            " Probe gpu:kprobe:k <>\n"
            "  if (> (var $x) (int 1))\n"
            "   (= (map @big) (call count))\n"
            "  (= (map @b) (> (var $x) (int 1)))\n"
            "  (= (map @c) (>= (var $x) (int 1)))\n"
            "  (= (map @d) (< (var $x) (int 2)))\n"
            "  (= (map @e (> (var $x) (int 0))) (int 1))\n");
  EXPECT_EQ(parse("uprobe:./app:f /arg0 / 2 > 1/ < @x = 1 >\nBEGIN { }"),
            "Program\n"
            " Probe uprobe:./app:f <>\n"
            "  predicate (> (/ (builtin arg0) (int 2)) (int 1))\n"
            "  (= (map @x) (int 1))\n"
            " Probe BEGIN\n");
}

TEST(Parser, Spans) {
  SourceFile file("stdin", "BEGIN { @x = count(1); }\nEND {\n  $v = 1 + 2;\n}");
  Diagnostics diags;
  auto prog = parse_program(file, diags);
  ASSERT_NE(prog, nullptr);
  const auto &assign = prog->probes[0]->body->stmts[0]->as<MapAssignStmt>();
  EXPECT_EQ(assign.value->span.col, 14u); // bpftrace: 1:14-22 for count(1)
  EXPECT_EQ(assign.value->span.end_col, 22u);
  EXPECT_EQ(assign.span.col, 9u); // the whole statement
  EXPECT_EQ(assign.span.end_col, 22u);
  EXPECT_EQ(assign.map->span.end_col, 11u);
  const auto &var = prog->probes[1]->body->stmts[0]->as<VarAssignStmt>();
  EXPECT_EQ(var.span.line, 3u);
  EXPECT_EQ(var.span.col, 3u);
  EXPECT_EQ(var.value->span.col, 8u);
  EXPECT_EQ(var.value->span.end_col, 13u);
  EXPECT_EQ(prog->probes[1]->span.line, 2u);
  EXPECT_EQ(prog->probes[1]->span.end_line, 4u);
}

// ---- errors: bpftrace 0.17's text, checked against `bpftrace -e` ----

TEST(ParserErrors, SyntaxErrorsLikeBpftrace) {
  EXPECT_EQ(error("BEGIN { @x = (1; }"),
            "stdin:1:14-17: ERROR: syntax error, unexpected ;, expecting ) or \",\"\n"
            "BEGIN { @x = (1; }\n"
            "             ~~~\n");
  EXPECT_EQ(error("BEGIN { $x.foo = 1; }"),
            "stdin:1:16-17: ERROR: syntax error, unexpected =, expecting }\n"
            "BEGIN { $x.foo = 1; }\n"
            "               ~\n");
  EXPECT_EQ(error("BEGIN { 1 2 }"), "stdin:1:11-12: ERROR: syntax error, unexpected integer, "
                                    "expecting }\n"
                                    "BEGIN { 1 2 }\n"
                                    "          ~\n");
  EXPECT_EQ(error("BEGIN { @x = foo bar; }"),
            "stdin:1:18-21: ERROR: syntax error, unexpected identifier, expecting }\n"
            "BEGIN { @x = foo bar; }\n"
            "                 ~~~\n");
  EXPECT_EQ(error("BEGIN { if (1) @x = 1; }"),
            "stdin:1:16-18: ERROR: syntax error, unexpected map, expecting {\n"
            "BEGIN { if (1) @x = 1; }\n"
            "               ~~\n");
  EXPECT_EQ(error("BEGIN { @x = 1 } }"),
            "stdin:1:18-19: ERROR: syntax error, unexpected }, expecting {\n"
            "BEGIN { @x = 1 } }\n"
            "                 ~\n");
  EXPECT_EQ(error("BEGIN { @x = 0x; }"),
            "stdin:1:14-16: ERROR: syntax error, unexpected identifier, expecting }\n"
            "BEGIN { @x = 0x; }\n"
            "             ~~\n");
  EXPECT_EQ(error("BEGIN { @x[1 = 2; }"),
            "stdin:1:14-15: ERROR: syntax error, unexpected =, expecting ] or \",\"\n"
            "BEGIN { @x[1 = 2; }\n"
            "             ~\n");
  EXPECT_EQ(error("BEGIN { @x = 1 ? 2; }"),
            "stdin:1:18-20: ERROR: syntax error, unexpected ;, expecting :\n"
            "BEGIN { @x = 1 ? 2; }\n"
            "                 ~~\n");
  // `if` takes its condition without parentheses too (newer bpftrace), so `(1` may be a tuple.
  EXPECT_EQ(error("BEGIN { if (1 { } }"),
            "stdin:1:15-16: ERROR: syntax error, unexpected {, expecting ) or \",\"\n"
            "BEGIN { if (1 { } }\n"
            "              ~\n");
  EXPECT_EQ(error("BEGIN { @x = (1,2,); }"), "stdin:1:14-20: ERROR: syntax error, unexpected )\n"
                                             "BEGIN { @x = (1,2,); }\n"
                                             "             ~~~~~~\n");
  EXPECT_EQ(error("BEGIN /1 { }"),
            "stdin:1:10-11: ERROR: syntax error, unexpected {, expecting end predicate\n"
            "BEGIN /1 { }\n"
            "         ~\n");
  EXPECT_EQ(error("BEGIN { ; }"), "stdin:1:9-10: ERROR: syntax error, unexpected ;, expecting }\n"
                                  "BEGIN { ; }\n"
                                  "        ~\n");
  EXPECT_EQ(error("BEGIN { if (1) {} ; }"),
            "stdin:1:19-20: ERROR: syntax error, unexpected ;, expecting }\n"
            "BEGIN { if (1) {} ; }\n"
            "                  ~\n");
  EXPECT_EQ(error("BEGIN { @x = 1;; }"),
            "stdin:1:14-17: ERROR: syntax error, unexpected ;, expecting }\n"
            "BEGIN { @x = 1;; }\n"
            "             ~~~\n");
  EXPECT_EQ(error("BEGIN { @x = 1 +\n; }"), "stdin:2:1-2: ERROR: syntax error, unexpected ;\n"
                                            "; }\n"
                                            "~\n");
}

TEST(ParserErrors, TokenNamesLikeBison) {
  auto first_line = [](const std::string &s) { return s.substr(0, s.find('\n')); };
  EXPECT_EQ(first_line(error("BEGIN { 1 pid }")),
            "stdin:1:11-14: ERROR: syntax error, unexpected builtin, expecting }");
  EXPECT_EQ(first_line(error("BEGIN { 1 count }")),
            "stdin:1:11-16: ERROR: syntax error, unexpected call, expecting }");
  EXPECT_EQ(first_line(error("BEGIN { 1 kstack }")),
            "stdin:1:11-17: ERROR: syntax error, unexpected call_builtin, expecting }");
  EXPECT_EQ(first_line(error("BEGIN { 1 \"s\" }")),
            "stdin:1:11-14: ERROR: syntax error, unexpected string, expecting }");
  EXPECT_EQ(first_line(error("BEGIN { 1 $x }")),
            "stdin:1:11-13: ERROR: syntax error, unexpected variable, expecting }");
  EXPECT_EQ(first_line(error("BEGIN { 1 , }")),
            "stdin:1:11-12: ERROR: syntax error, unexpected \",\", expecting }");
  EXPECT_EQ(first_line(error("BEGIN { 1 ++ }")),
            "stdin:1:11-13: ERROR: syntax error, unexpected ++, expecting }");
  EXPECT_EQ(first_line(error("BEGIN { 1 else }")),
            "stdin:1:11-15: ERROR: syntax error, unexpected else, expecting }");
  EXPECT_EQ(first_line(error("BEGIN { 1 while }")),
            "stdin:1:11-16: ERROR: syntax error, unexpected while, expecting }");
  EXPECT_EQ(first_line(error("BEGIN { 1 `}")), "stdin:1:11-12: ERROR: invalid character '`'");
}

TEST(ParserErrors, LexicalErrors) {
  EXPECT_EQ(error("BEGIN { @x = \"abc; }"), "stdin:1:14-21: ERROR: unterminated string\n"
                                            "BEGIN { @x = \"abc; }\n"
                                            "             ~~~~~~~\n");
  EXPECT_EQ(error(R"(BEGIN { printf("a\x41\101\q\"\\|\n"); exit() })"),
            "stdin:1:9-28: ERROR: invalid escape character '\\q'\n"
            "BEGIN { printf(\"a\\x41\\101\\q\\\"\\\\|\\n\"); exit() }\n"
            "        ~~~~~~~~~~~~~~~~~~~\n");
  EXPECT_EQ(error("BEGIN { @x = 09; }"), "stdin:1:14-16: ERROR: Found trailing non-numeric "
                                         "characters\n"
                                         "BEGIN { @x = 09; }\n"
                                         "             ~~\n");
}

TEST(ParserErrors, GrammarRulesBisonChecksInActions) {
  EXPECT_EQ(error("BEGIN { pid++ }"),
            "stdin:1:9-12: ERROR: The ++ operator must be applied to a map or variable\n"
            "BEGIN { pid++ }\n"
            "        ~~~\n");
  EXPECT_EQ(error("BEGIN { (1,2).0 = 1 }"),
            "stdin:1:9-20: ERROR: Tuples are immutable once created. Consider creating a new "
            "tuple and assigning it instead.\n"
            "BEGIN { (1,2).0 = 1 }\n"
            "        ~~~~~~~~~~~\n");
  EXPECT_EQ(error("BEGIN { @x = $0; }"),
            "stdin:1:14-16: ERROR: param $0 is out of integer range [1, 9223372036854775807]\n"
            "BEGIN { @x = $0; }\n"
            "             ~~\n");
}

// The words after the script: $N a number or, inside str(), its text; $# their count.
std::string parse_with(const std::string &text, const std::vector<std::string> &params) {
  SourceFile file("stdin", text);
  Diagnostics diags;
  auto prog = parse_program(file, diags, params);
  return prog ? dump_ast(*prog) : diags.render(file);
}

TEST(Parser, PositionalParameters) {
  EXPECT_EQ(parse_with("BEGIN { @x = $1 + $#; @s = str($2); @m = $3; }", {"0x10", "hi"}),
            "Program\n"
            " Probe BEGIN\n"
            "  (= (map @x) (+ (int 16) (int 2)))\n"
            "  (= (map @s) (string \"hi\"))\n"
            "  (= (map @m) (int 0))\n");
  EXPECT_EQ(parse_with("i:ms:$1 { }", {"5"}), "Program\n Probe interval:ms:5\n");
  EXPECT_EQ(parse_with("BEGIN { @x = $1; }", {"hello"}),
            "stdin:1:14-16: ERROR: $1 used numerically but given \"hello\". Try using str($1).\n"
            "BEGIN { @x = $1; }\n"
            "             ~~\n");
}

TEST(Parser, ShebangLines) {
  EXPECT_EQ(parse("#!/usr/bin/env bpftrace\nBEGIN { }\n#! again\nEND { }"),
            "Program\n Probe BEGIN\n Probe END\n");
  EXPECT_EQ(error("BEGIN { } #!x"), "stdin:1:11-12: ERROR: invalid character '#'\n"
                                    "BEGIN { } #!x\n"
                                    "          ~\n");
}

TEST(Parser, PointerCastsAndDereference) {
  EXPECT_EQ(parse("BEGIN { @x = *(uint16 *)(arg0 + 8); @y = **(int32**)arg0; }"),
            "Program\n"
            " Probe BEGIN\n"
            "  (= (map @x) (* (cast uint16* (+ (builtin arg0) (int 8)))))\n"
            "  (= (map @y) (* (* (cast int32** (builtin arg0)))))\n");
}

// bpftrace head's array casts and typeof(): a macro's parameter bound to typeof(...) is a type
// where the body writes one (`a[2]`, `b*`, `sizeof(b)`), through nested macros too.
TEST(Parser, ArrayCastsAndTypeof) {
  EXPECT_EQ(parse("begin { @a = (int8[8])1; @b = (bool[])2; let $y: typeof(@a); }"),
            "Program\n"
            " Probe begin\n"
            "  (= (map @a) (cast int8[8] (int 1)))\n"
            "  (= (map @b) (cast bool[] (int 2)))\n"
            "  let (= (var $y) (cast typeof((map @a)) (int 0)))\n");
  EXPECT_EQ(parse("macro sof(a, b) { sizeof(a[2]) + sizeof(b*) + sizeof(b) } macro n(z) { sof(z, z) }"
                  " begin { @ = n(typeof(uint64 *)); }"),
            "Program\n"
            " Probe begin\n"
            "  (= (map @) (block (block (+ (+ (sizeof uint64*[2]) (sizeof uint64**)) "
            "(sizeof uint64*)))))\n");
  EXPECT_EQ(error("begin { @a = (int8[0])1; }"),
            "stdin:1:19-22: ERROR: An array's size must be a number from 1 to 65536\n"
            "begin { @a = (int8[0])1; }\n"
            "                  ~~~\n");
  EXPECT_EQ(error("begin { $t = typeof(1); }"),
            "stdin:1:14-23: ERROR: typeof() is a type, not a value: use it in a cast, sizeof(), "
            "`let $x: typeof(...)` or as a macro's argument\n"
            "begin { $t = typeof(1); }\n"
            "             ~~~~~~~~~\n");
}

TEST(ParserErrors, MissingBody) {
  EXPECT_EQ(error("BEGIN"), "stdin:1:1-6: ERROR: unexpected end of file, expected {\n"
                            "BEGIN\n"
                            "~~~~~\n");
  EXPECT_EQ(error("{ }"), "stdin:1:1-2: ERROR: No attach points for probe\n"
                          "{ }\n"
                          "~\n");
}

TEST(ParserErrors, AttachPoints) {
  EXPECT_EQ(error("uprobe:x { }"), "stdin:1:1-9: ERROR: uprobe probe type requires 2 arguments\n"
                                   "uprobe:x { }\n"
                                   "~~~~~~~~\n");
  // interval:1 (nanoseconds) and interval:1s are newer bpftrace's one-part forms.
  EXPECT_EQ(error("interval:1x { }"), "stdin:1:1-12: ERROR: x is not an accepted unit of time\n"
                                      "interval:1x { }\n"
                                      "~~~~~~~~~~~\n");
  EXPECT_EQ(error("interval:1:2:3 { }"),
            "stdin:1:1-15: ERROR: interval probe type requires 2 arguments\n"
            "interval:1:2:3 { }\n"
            "~~~~~~~~~~~~~~\n");
  EXPECT_EQ(error("interval:x:1 { }"), "stdin:1:1-13: ERROR: x is not an accepted unit of time\n"
                                       "interval:x:1 { }\n"
                                       "~~~~~~~~~~~~\n");
  EXPECT_EQ(error("BEGIN:x { }"), "stdin:1:1-8: ERROR: BEGIN probe type requires 0 arguments\n"
                                  "BEGIN:x { }\n"
                                  "~~~~~~~\n");
  // bpftrace 0.17 aborts ("FATAL: Invalid probe type made it to attachpoint parser").
  EXPECT_EQ(error("foo:bar { }"), "stdin:1:1-4: ERROR: Invalid probe type: foo\n"
                                  "foo:bar { }\n"
                                  "~~~\n");
  EXPECT_EQ(error("host:uprbe:/bin/ls:main { }"),
            "stdin:1:6-11: ERROR: Invalid probe type: uprbe (did you mean 'uprobe'?)\n"
            "host:uprbe:/bin/ls:main { }\n"
            "     ~~~~~\n");
  EXPECT_EQ(error("gpu:kretprob:\"scale(float*, int)\" { }"),
            "stdin:1:5-13: ERROR: Invalid gpu probe type: kretprob (did you mean 'kretprobe'?)\n"
            "gpu:kretprob:\"scale(float*, int)\" { }\n"
            "    ~~~~~~~~\n");
  EXPECT_EQ(error("rawtracepoint:x { }"),
            "stdin:1:1-16: ERROR: rawtracepoint probes are not supported by gpubt\n"
            "rawtracepoint:x { }\n"
            "~~~~~~~~~~~~~~~\n");
  EXPECT_EQ(error("usdt:a { }"), "stdin:1:1-7: ERROR: usdt probe type requires 2 or 3 arguments\n"
                                 "usdt:a { }\n"
                                 "~~~~~~\n");
  EXPECT_EQ(error("software:faults:0 { }"),
            "stdin:1:1-18: ERROR: software: invalid count '0', expected a positive integer\n"
            "software:faults:0 { }\n"
            "~~~~~~~~~~~~~~~~~\n");
  EXPECT_EQ(error("kprobe:a:b { }"), "stdin:1:1-11: ERROR: kprobe probe type requires 1 argument\n"
                                     "kprobe:a:b { }\n"
                                     "~~~~~~~~~~\n");
  EXPECT_EQ(error("host:gpu:kprobe:k { }"), "stdin:1:1-18: ERROR: host: cannot prefix a gpu probe\n"
                                            "host:gpu:kprobe:k { }\n"
                                            "~~~~~~~~~~~~~~~~~\n");
  EXPECT_EQ(error("gpu:kprobe { }"),
            "stdin:1:1-11: ERROR: gpu:kprobe probe type requires 1 argument\n"
            "gpu:kprobe { }\n"
            "~~~~~~~~~~\n");
}

TEST(ParserErrors, ComparisonClosingAnAngleBody) {
  EXPECT_EQ(error("gpu:kprobe:k < @x = $a > 1; >"),
            "stdin:1:26-27: ERROR: syntax error, unexpected integer, expecting { (a `>` outside "
            "parentheses ends a `< >` block: write comparisons there as ($a > $b))\n"
            "gpu:kprobe:k < @x = $a > 1; >\n"
            "                         ~\n");
}

// ---- robustness: never throw, crash or hang ----

TEST(ParserRobustness, EmptyAndCommentOnly) {
  EXPECT_EQ(error(""), "stdin: ERROR: unexpected end of file, expected {\n");
  EXPECT_EQ(error("// only a comment\n"), "stdin: ERROR: unexpected end of file, expected {\n");
  EXPECT_EQ(error("/* unterminated"), "stdin:1:1-2: ERROR: syntax error, unexpected /, "
                                      "expecting {\n/* unterminated\n~\n");
}

TEST(ParserRobustness, NulAndBinary) {
  EXPECT_EQ(
      error(std::string("BEGIN { \0 }", 11)),
      std::string("stdin:1:9-10: ERROR: invalid character '\\x00'\nBEGIN { \0 }\n        ~\n", 68));
  std::string garbage;
  uint32_t x = 12345;
  for (int i = 0; i < 100000; ++i) {
    x = x * 1103515245 + 12345;
    garbage += char(x >> 16);
  }
  SourceFile file("stdin", garbage);
  Diagnostics diags;
  EXPECT_EQ(parse_program(file, diags), nullptr);
  EXPECT_TRUE(diags.has_errors());
}

TEST(ParserRobustness, DeepNesting) {
  std::string parens =
      "BEGIN { @x = " + std::string(100000, '(') + "1" + std::string(100000, ')') + "; }";
  EXPECT_EQ(error(parens).substr(0, 75),
            "stdin:1:1013-1014: ERROR: nesting too deep (more than 1000 levels)\nBEGIN { ");
  std::string nots = "BEGIN { @x = " + std::string(100000, '!') + "1; }";
  EXPECT_NE(error(nots).find("ERROR: nesting too deep"), std::string::npos);
  std::string ternaries = "BEGIN { @x = ";
  for (int i = 0; i < 20000; ++i)
    ternaries += "1 ? 2 : ";
  EXPECT_NE(error(ternaries + "3; }").find("ERROR: nesting too deep"), std::string::npos);
  std::string elses = "BEGIN { ";
  for (int i = 0; i < 5000; ++i)
    elses += "if (1) { } else ";
  EXPECT_NE(error(elses + "{ } }").find("ERROR: nesting too deep"), std::string::npos);
  // Unbalanced: never closed.
  EXPECT_NE(error("BEGIN { " + std::string(5000, '{')).find("ERROR: nesting too deep"),
            std::string::npos);
}

// Issue 17: 3,000,000 unary operators overflowed the parser thread's 512 MiB stack (100,000 on an
// ASan build); casts and else-if chains recurse without brackets the pre-scan could count.
TEST(ParserRobustness, RecursionWithoutBracketsStopsCleanly) {
  for (std::string unit : {"!", "-~", "(int8)", "1 ? 2 : ", "if (1) { } else "}) {
    std::string body;
    while (body.size() < 1'000'000)
      body += unit;
    std::string script = unit.starts_with("if") ? "BEGIN { " + body + "{ } }"
                                                : "BEGIN { @x = " + body + "1; }";
    std::string e = error(script);
    EXPECT_NE(e.find("ERROR: nesting too deep (more than 1000 levels)"), std::string::npos)
        << unit << ": " << e.substr(0, 200);
    EXPECT_EQ(e.rfind("stdin:1:", 0), 0u) << unit << ": " << e.substr(0, 200);
  }
}

TEST(ParserRobustness, ModeratelyDeepIsFine) {
  std::string s = "BEGIN { @x = " + std::string(200, '(') + "1" + std::string(200, ')') + "; }";
  EXPECT_EQ(parse(s), "Program\n Probe BEGIN\n  (= (map @x) (int 1))\n");
}

TEST(ParserRobustness, ThousandsOfProbesAreFast) {
  std::string script;
  for (int i = 0; i < 5000; ++i)
    script += "uprobe:./app:f" + std::to_string(i) + " /pid == " + std::to_string(i) +
              "/ { @x[tid, " + std::to_string(i) +
              "] = count(); if ($a > 1) { @y = hist(arg0); } "
              "else { printf(\"%d\\n\", 1 + 2 * 3); } }\n";
  auto start = std::chrono::steady_clock::now();
  SourceFile file("stdin", script);
  Diagnostics diags;
  auto prog = parse_program(file, diags);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_NE(prog, nullptr) << diags.render(file);
  EXPECT_EQ(prog->probes.size(), 5000u);
  EXPECT_LT(secs, 20.0); // ~1 s on one core; the bound only catches quadratic behaviour
}

} // namespace
} // namespace gpubt::frontend
