// A compact, stable text form of the AST for --emit=ast and the parser tests. One line per
// probe, predicate and statement, indented one space per level; expressions are s-expressions:
//   Program
//    Probe uprobe:./app:foo, host:uprobe:libc:malloc     (" <>" appended for a `< >` body)
//     predicate (== (builtin pid) (int 42))
//     (= (map @x (builtin tid)) (call count))             (+= etc. for compound assignment)
//     (= (var $t) (tuple (int 1) (string "a\n")))
//     if (> (var $x) (int 1))
//      (post++ (map @n))
//     else
//      (call printf (string "%d\n") (cast uint32 (. (builtin args) size)))
// Other forms: (- e) (! e) (~ e) (pre++ e) (pre-- e) (post-- e) (? c a b); a negative literal
// is (int -1). Types are not shown.
#pragma once
#include <string>

#include "frontend/ast.h"

namespace gpubt::frontend {

std::string dump_ast(const Program &program);
std::string dump_expr(const Expr &expr);

// The operator as written: "+", "<<", "&&", ...
const char *op_text(BinaryOp op);
const char *op_text(UnaryOp op); // "-", "!", "~", "pre++", "post--", ...

} // namespace gpubt::frontend
