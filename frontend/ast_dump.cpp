// Renders the AST in the s-expression form described in ast_dump.h.
#include "frontend/ast_dump.h"

#include <cstdio>

namespace gpubt::frontend {
namespace {

const char *const kBinaryText[] = {"+",  "-",  "*",  "/", "%",  "&", "|",  "^",  "<<",
                                   ">>", "==", "!=", "<", "<=", ">", ">=", "&&", "||"};
const char *const kUnaryText[] = {"-", "!", "~", "*", "pre++", "pre--", "post++", "post--", "&"};

std::string quote(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\r':
      out += "\\r";
      break;
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    default:
      if (c < 0x20 || c >= 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
      } else {
        out += char(c);
      }
    }
  }
  return out + "\"";
}

std::string list(const char *head, const std::string &name, const std::vector<ExprPtr> &items) {
  std::string out = std::string("(") + head;
  if (!name.empty())
    out += " " + name;
  for (const auto &e : items)
    out += " " + dump_expr(*e);
  return out + ")";
}

void dump_stmt(const Stmt &s, int depth, std::string &out);

void dump_block(const BlockStmt &b, int depth, std::string &out) {
  for (const auto &s : b.stmts)
    dump_stmt(*s, depth, out);
}

void dump_assign(const char *pre, const std::optional<BinaryOp> &compound, const Expr &target,
                 const Expr &value, std::string &out) {
  std::string op = compound ? std::string(op_text(*compound)) + "=" : "=";
  out += pre + ("(" + op + " " + dump_expr(target) + " " + dump_expr(value) + ")\n");
}

void dump_stmt(const Stmt &s, int depth, std::string &out) {
  std::string pad(depth, ' ');
  switch (s.kind) {
  case StmtKind::Expr:
    out += pad + dump_expr(*s.as<ExprStmt>().expr) + "\n";
    return;
  case StmtKind::MapAssign: {
    const auto &a = s.as<MapAssignStmt>();
    dump_assign(pad.c_str(), a.compound, *a.map, *a.value, out);
    return;
  }
  case StmtKind::VarAssign: {
    const auto &a = s.as<VarAssignStmt>();
    dump_assign((pad + (a.declaration != VarAssignStmt::Decl::None ? "let " : "")).c_str(), a.compound, *a.var, *a.value, out);
    return;
  }
  case StmtKind::If: {
    const auto &i = s.as<IfStmt>();
    out += pad + "if " + dump_expr(*i.cond) + "\n";
    dump_block(*i.then_block, depth + 1, out);
    if (i.else_block) {
      out += pad + "else\n";
      dump_block(*i.else_block, depth + 1, out);
    }
    return;
  }
  case StmtKind::Block:
    out += pad + "block\n";
    dump_block(s.as<BlockStmt>(), depth + 1, out);
    return;
  case StmtKind::While:
    if (const auto &w = s.as<WhileStmt>(); w.each_map)
      out += pad + "for " + dump_expr(*w.each_var) + " : " + dump_expr(*w.each_map) + "\n";
    else
      out += pad + "while " + dump_expr(*w.cond) + "\n";
    dump_block(*s.as<WhileStmt>().body, depth + 1, out);
    if (s.as<WhileStmt>().step) {
      out += pad + "step\n";
      dump_stmt(*s.as<WhileStmt>().step, depth + 1, out);
    }
    return;
  case StmtKind::Jump: {
    static const char *const names[] = {"break", "continue", "return"};
    out += pad + names[int(s.as<JumpStmt>().jump)] + "\n";
    return;
  }
  }
}

} // namespace

const char *op_text(BinaryOp op) { return kBinaryText[int(op)]; }
const char *op_text(UnaryOp op) { return kUnaryText[int(op)]; }

// uint8, struct Foo*, int8[8], int8[], typeof($x)*
static std::string spec_text(const TypeSpec &t) {
  std::string out = t.of ? "typeof(" + dump_expr(*t.of) + ")" : t.name;
  out += std::string(t.pointer_depth, '*');
  if (t.array_count)
    out += "[" + (*t.array_count ? std::to_string(*t.array_count) : "") + "]";
  return out;
}

std::string dump_expr(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Integer:
    return "(int " + std::to_string(e.as<IntegerExpr>().value) + ")";
  case ExprKind::String:
    return "(string " + quote(e.as<StringExpr>().value) + ")";
  case ExprKind::Builtin:
    return "(builtin " + e.as<BuiltinExpr>().name + ")";
  case ExprKind::Variable:
    return "(var " + e.as<VariableExpr>().name + ")";
  case ExprKind::Map:
    return list("map", e.as<MapExpr>().name, e.as<MapExpr>().keys);
  case ExprKind::Call:
    return list("call", e.as<CallExpr>().name, e.as<CallExpr>().args);
  case ExprKind::Binary: {
    const auto &b = e.as<BinaryExpr>();
    return std::string("(") + op_text(b.op) + " " + dump_expr(*b.lhs) + " " + dump_expr(*b.rhs) +
           ")";
  }
  case ExprKind::Unary: {
    const auto &u = e.as<UnaryExpr>();
    return std::string("(") + op_text(u.op) + " " + dump_expr(*u.operand) + ")";
  }
  case ExprKind::Ternary: {
    const auto &t = e.as<TernaryExpr>();
    return "(? " + dump_expr(*t.cond) + " " + dump_expr(*t.then_expr) + " " +
           dump_expr(*t.else_expr) + ")";
  }
  case ExprKind::Cast: {
    const auto &c = e.as<CastExpr>();
    return "(cast " + spec_text(c.to) + " " + dump_expr(*c.operand) + ")";
  }
  case ExprKind::Field: {
    const auto &f = e.as<FieldExpr>();
    return std::string(f.arrow ? "(-> " : "(. ") + dump_expr(*f.base) + " " + f.field + ")";
  }
  case ExprKind::Tuple: {
    const auto &t = e.as<TupleExpr>();
    if (t.names.empty())
      return list("tuple", "", t.elems);
    std::string out = "(record";
    for (size_t i = 0; i < t.elems.size() && i < t.names.size(); ++i)
      out += " " + t.names[i] + "=" + dump_expr(*t.elems[i]);
    return out + ")";
  }
  case ExprKind::Index:
    return "([] " + dump_expr(*e.as<IndexExpr>().base) + " " +
           dump_expr(*e.as<IndexExpr>().index) + ")";
  case ExprKind::SizeofType: {
    const auto &s = e.as<SizeofTypeExpr>();
    std::string path;
    for (const auto &f : s.fields)
      path += (path.empty() ? " " : ".") + f;
    return std::string(s.fields.empty() ? "(sizeof " : "(offsetof ") + spec_text(s.of) + path +
           ")";
  }
  case ExprKind::Block: {
    const auto &b = e.as<BlockExpr>();
    std::string stmts; // the statements' lines, one after another
    dump_block(*b.block, 0, stmts);
    std::string out = "(block";
    for (size_t at = 0, nl; (nl = stmts.find('\n', at)) != std::string::npos; at = nl + 1)
      out += " " + stmts.substr(at, nl - at) + ";";
    return out + (b.value ? " " + dump_expr(*b.value) : "") + ")";
  }
  }
  return "(?)";
}

std::string dump_ast(const Program &program) {
  std::string out = "Program\n";
  for (const auto &p : program.probes) {
    out += " Probe";
    const char *sep = " ";
    for (const auto &ap : p->attach_points) {
      out += sep + std::string(ap.host_prefix ? "host:" : "") + ap.name();
      sep = ", ";
    }
    if (p->delimiter == BlockDelimiter::Angles)
      out += " <>";
    out += "\n";
    if (p->predicate)
      out += "  predicate " + dump_expr(*p->predicate) + "\n";
    dump_block(*p->body, 2, out);
  }
  return out;
}

} // namespace gpubt::frontend
