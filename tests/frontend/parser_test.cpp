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

} // namespace
} // namespace gpubt::frontend
