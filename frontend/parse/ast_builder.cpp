// Walks the generated parse tree by hand (no Any-returning visitor) so every node is built
// into a unique_ptr directly. Spans are the exact extent of a node's tokens.
#include "frontend/parse/ast_builder.h"

#include <map>

#include "frontend/attach_point.h"
#include "frontend/scope_variables.h"
#include "frontend/parse/literals.h"
#include "frontend/parse/macros.h"
#include "frontend/parse/operators.h"
#include "frontend/parse/positional_params.h"
#include "frontend/parse/syntax_errors.h"
#include "stdlib/builtins.h"
#include "stdlib/functions.h"

namespace gpubt::frontend::parse {
namespace {

using P = gpubt_parse::GpubtParser;
using antlr4::Token;

class Builder {
public:
  Builder(antlr4::BufferedTokenStream &tokens, const std::string &source,
          const PositionalParams &params, Diagnostics &diags, const StdlibMacros &stdlib,
          const std::vector<ImportedScript> &imports)
      : script_{nullptr, &tokens, &source, 0}, params_(params), diags_(diags), stdlib_(stdlib),
        imports_(imports) {
    others_.push_back(stdlib.from);
    for (const auto &imported : imports)
      others_.push_back(imported.from);
  }

  std::unique_ptr<Program> program(P::ProgramContext *ctx) {
    auto prog = std::make_unique<Program>();
    prog->span = span(ctx);
    // Before the probes: a probe may call a later macro, or one from another file.
    add_macros(ctx->macroDef());
    for (const auto &imported : imports_)
      add_macros(imported.tree->macroDef());
    for (auto *m : stdlib_.defs) // the stdlib's, where the script has none of the name
      macros_.try_emplace(text(m->IDENT()), m);
    for (auto *d : ctx->cDefinition()) {
      CDefinition def;
      def.span = span(d);
      def.text = text(d->getStart());
      prog->c_definitions.push_back(std::move(def));
    }
    for (auto *c : ctx->configBlock())
      for (auto *item : c->configItem()) {
        ConfigItem ci;
        ci.span = span(item);
        ci.name = text(item->IDENT(0));
        Token *value = item->getStop();
        ci.value = value->getType() == P::STRING ? decode_string(text(value)).value : text(value);
        prog->config.push_back(std::move(ci));
      }
    for (const auto &imported : imports_) {
      refuse_in_import(imported.tree->configBlock(),
                       "an imported script cannot contain a config block: only the root script "
                       "may have one");
      refuse_in_import(imported.tree->cDefinition(),
                       "C definitions in an imported .bt script are not supported by gpubt: "
                       "import them from a .h header");
      for (auto *d : imported.tree->mapDecl())
        prog->map_decls.push_back(map_decl(d));
    }
    for (auto *d : ctx->mapDecl())
      prog->map_decls.push_back(map_decl(d));
    for (const auto &imported : imports_)
      for (auto *p : imported.tree->probe())
        prog->probes.push_back(probe(p));
    for (auto *p : ctx->probe())
      prog->probes.push_back(probe(p));
    return prog;
  }

private:
  OtherFile script_;
  std::vector<OtherFile> others_; // the stdlib's, then the imported scripts
  const PositionalParams &params_;
  Diagnostics &diags_;
  int depth_ = 0;
  bool too_deep_ = false;
  const StdlibMacros &stdlib_;
  const std::vector<ImportedScript> &imports_;
  std::map<std::string, P::MacroDefContext *> macros_;
  MacroExpansions expansions_;

  void add_macros(const std::vector<P::MacroDefContext *> &defs) {
    for (auto *m : defs) {
      std::string name = text(m->IDENT());
      if (!macros_.try_emplace(name, m).second)
        diags_.error(span(m->IDENT()), "Macro '" + name + "' is already defined");
    }
  }
  template <class Ctx> void refuse_in_import(const std::vector<Ctx *> &found, const char *why) {
    for (auto *c : found)
      diags_.error(span(c), why);
  }
  MapDecl map_decl(P::MapDeclContext *d) {
    MapDecl md;
    md.span = span(d);
    md.name = text(d->MAP());
    md.kind = text(d->IDENT());
    IntLiteral n = decode_int(text(d->INT()));
    md.max_entries = n.value ? uint64_t(*n.value) : 0;
    return md;
  }

  // The file a token came from: the script, the stdlib's or an imported one.
  const OtherFile &file_of(const Token *t) const {
    for (const auto &f : others_)
      if (f.input && t->getInputStream() == f.input)
        return f;
    return script_;
  }
  std::string text(const Token *t) const {
    return file_of(t).text->substr(t->getStartIndex(), t->getStopIndex() - t->getStartIndex() + 1);
  }
  SourceSpan token_span(const Token *t) const {
    SourceSpan s = parse::token_span(t);
    s.file = file_of(t).file;
    return s;
  }
  SourceSpan bison_span(const Token *t) const {
    const OtherFile &f = file_of(t);
    SourceSpan s = parse::bison_span(f.tokens ? *f.tokens : *script_.tokens, t);
    s.file = f.file;
    return s;
  }
  std::string text(antlr4::tree::TerminalNode *n) const { return text(n->getSymbol()); }
  SourceSpan span(const Token *a, const Token *b) const {
    return SourceSpan::merge(token_span(a), token_span(b));
  }
  SourceSpan span(antlr4::ParserRuleContext *ctx) const {
    return span(ctx->getStart(), ctx->getStop() ? ctx->getStop() : ctx->getStart());
  }
  SourceSpan span(antlr4::tree::TerminalNode *n) const { return token_span(n->getSymbol()); }

  // Counts nesting on the way down; past kMaxNesting reports once and builds nothing deeper.
  struct Nest {
    Builder &b;
    explicit Nest(Builder &b) : b(b) { ++b.depth_; }
    ~Nest() { --b.depth_; }
    bool too_deep(const SourceSpan &s) {
      if (b.depth_ <= kMaxNesting)
        return false;
      if (!b.too_deep_)
        b.diags_.error(s,
                       "nesting too deep (more than " + std::to_string(kMaxNesting) + " levels)");
      b.too_deep_ = true;
      return true;
    }
  };

  std::unique_ptr<Probe> probe(P::ProbeContext *ctx) {
    auto p = std::make_unique<Probe>();
    p->span = span(ctx);
    for (auto *a : ctx->attachPoint()) {
      AttachPoint ap;
      ap.span = span(a);
      ap.raw = params_.substitute(text(a->ATTACH()));
      parse_attach_point(ap, diags_);
      p->attach_points.push_back(std::move(ap));
    }
    if (auto *pred = ctx->predicate())
      p->predicate = expr(pred->expr());
    auto *body = ctx->body();
    p->delimiter = body->LT() ? BlockDelimiter::Angles : BlockDelimiter::Braces;
    p->body = block(body->stmts(), span(body));
    return p;
  }

  std::unique_ptr<BlockStmt> block(P::StmtsContext *ctx, SourceSpan s) {
    Nest nest(*this);
    auto b = std::make_unique<BlockStmt>();
    b->span = s;
    if (nest.too_deep(s))
      return b;
    for (auto *child : ctx->children) {
      if (auto *i = dynamic_cast<P::IfStmtContext *>(child))
        b->stmts.push_back(if_stmt(i));
      else if (auto *u = dynamic_cast<P::UnrollStmtContext *>(child))
        b->stmts.push_back(unroll_stmt(u));
      else if (auto *w = dynamic_cast<P::WhileStmtContext *>(child))
        b->stmts.push_back(while_stmt(w));
      else if (auto *f = dynamic_cast<P::ForStmtContext *>(child)) {
        if (auto built = for_stmt(f))
          b->stmts.push_back(std::move(built));
      } else if (auto *bs = dynamic_cast<P::BlockStmtContext *>(child))
        b->stmts.push_back(block(bs->block()->stmts(), span(bs)));
      else if (auto *l = dynamic_cast<P::LetStmtContext *>(child))
        b->stmts.push_back(let_stmt(l));
      else if (auto *j = dynamic_cast<P::JumpStmtContext *>(child))
        b->stmts.push_back(jump_stmt(j));
      else if (auto *st = dynamic_cast<P::StmtContext *>(child))
        if (auto built = stmt(st))
          b->stmts.push_back(std::move(built));
    }
    return b;
  }

  std::unique_ptr<IfStmt> if_stmt(P::IfStmtContext *ctx) {
    Nest nest(*this);
    auto s = std::make_unique<IfStmt>();
    s->span = span(ctx);
    if (nest.too_deep(s->span))
      return s;
    s->cond = expr(ctx->expr());
    auto blocks = ctx->block();
    s->then_block = block(blocks[0]->stmts(), span(blocks[0]));
    if (blocks.size() > 1) {
      s->else_block = block(blocks[1]->stmts(), span(blocks[1]));
    } else if (auto *elif = ctx->ifStmt()) {
      s->else_block = std::make_unique<BlockStmt>();
      s->else_block->span = span(elif);
      s->else_block->stmts.push_back(if_stmt(elif));
    }
    return s;
  }

  std::unique_ptr<WhileStmt> while_stmt(P::WhileStmtContext *ctx) {
    Nest nest(*this);
    auto s = std::make_unique<WhileStmt>();
    s->span = span(ctx);
    if (nest.too_deep(s->span))
      return s;
    s->cond = expr(ctx->expr());
    s->body = block(ctx->block()->stmts(), span(ctx->block()));
    return s;
  }

  // let $x; let $x = v; let $x: type = v. `let $x;` holds 0 (of TYPE) until assigned.
  std::unique_ptr<VarAssignStmt> let_stmt(P::LetStmtContext *ctx) {
    auto s = std::make_unique<VarAssignStmt>();
    s->span = span(ctx);
    s->declaration = VarAssignStmt::Decl::Let;
    s->var = var(ctx->var());
    s->value = ctx->expr() ? expr(ctx->expr()) : make<IntegerExpr>(span(ctx));
    if (auto *t = ctx->typeName()) {
      auto cast = make<CastExpr>(s->value->span);
      cast->to = type_spec(t);
      cast->operand = std::move(s->value);
      s->value = std::move(cast);
    }
    return s;
  }

  StmtPtr jump_stmt(P::JumpStmtContext *ctx) {
    auto s = std::make_unique<JumpStmt>();
    s->span = span(ctx);
    s->jump = ctx->BREAK() ? Jump::Break : ctx->CONTINUE() ? Jump::Continue : Jump::Return;
    if (!ctx->expr())
      return s;
    // `return $x;`: { $x; return; } (a probe's return value means nothing to gpubt).
    auto value = std::make_unique<ExprStmt>();
    value->span = span(ctx->expr());
    value->expr = expr(ctx->expr());
    auto b = std::make_unique<BlockStmt>();
    b->span = s->span;
    b->stmts.push_back(std::move(value));
    b->stmts.push_back(std::move(s));
    return b;
  }

  // for ($kv : @map) { body }: a WhileStmt with each_map (ast.h).
  // for ($i : a..b) { body } as { let $i = a; let $i.end = b; while ($i < $i.end) { body }
  // step $i = $i + 1 } (ast.h). The end is evaluated once, as bpftrace does.
  StmtPtr for_stmt(P::ForStmtContext *ctx) {
    Nest nest(*this);
    auto *head = ctx->forHead();
    SourceSpan at = span(ctx);
    if (head->map()) {
      auto loop = std::make_unique<WhileStmt>();
      loop->span = at;
      loop->is_for = true;
      loop->each_map = map(head->map());
      loop->each_var = var(head->var());
      loop->body = block(ctx->block()->stmts(), span(ctx->block()));
      return loop;
    }
    auto loop_var = [&] { return var(head->var()); };
    auto end_var = [&] {
      auto v = var(head->var());
      v->name += ".end"; // no script can name it
      return v;
    };
    auto out = std::make_unique<BlockStmt>();
    out->span = at;
    auto decl = [&](std::unique_ptr<VariableExpr> v, ExprPtr value) {
      auto s = std::make_unique<VarAssignStmt>();
      s->span = v->span;
      s->declaration = VarAssignStmt::Decl::Loop;
      s->var = std::move(v);
      s->value = std::move(value);
      out->stmts.push_back(std::move(s));
    };
    decl(loop_var(), expr(head->expr(0)));
    decl(end_var(), expr(head->expr(1)));
    auto loop = std::make_unique<WhileStmt>();
    loop->span = at;
    loop->is_for = true;
    loop->is_range = true;
    auto cond = make<BinaryExpr>(span(head));
    cond->op = BinaryOp::Lt;
    cond->lhs = loop_var();
    cond->rhs = end_var();
    loop->cond = std::move(cond);
    loop->body = block(ctx->block()->stmts(), span(ctx->block()));
    auto step = std::make_unique<VarAssignStmt>();
    step->span = span(head);
    step->var = loop_var();
    step->compound = BinaryOp::Add;
    step->value = make<IntegerExpr>(span(head));
    step->value->as<IntegerExpr>().value = 1;
    loop->step = std::move(step);
    out->stmts.push_back(std::move(loop));
    return out;
  }

  // unroll (N) { ... }: the block N times over (N a literal or a positional parameter, 1..100).
  std::unique_ptr<BlockStmt> unroll_stmt(P::UnrollStmtContext *ctx) {
    auto b = std::make_unique<BlockStmt>();
    b->span = span(ctx);
    SourceSpan head = span(ctx->UNROLL()->getSymbol(), ctx->RPAREN()->getSymbol());
    auto n = expr(ctx->expr());
    if (n->kind != ExprKind::Integer) {
      diags_.error(head, "invalid unroll value");
      return b;
    }
    int64_t times = n->as<IntegerExpr>().value;
    if (times > 100 || times < 1) {
      diags_.error(head, times > 100 ? "unroll maximum value is 100" : "unroll minimum value is 1");
      return b;
    }
    for (int64_t i = 0; i < times; ++i)
      b->stmts.push_back(block(ctx->block()->stmts(), span(ctx->block())));
    return b;
  }

  StmtPtr stmt(P::StmtContext *ctx) {
    auto exprs = ctx->expr();
    if (!ctx->assignOp()) {
      auto s = std::make_unique<ExprStmt>();
      s->span = span(ctx);
      s->expr = expr(exprs[0]);
      return s;
    }
    Token *op = ctx->assignOp()->getStart();
    std::optional<BinaryOp> compound;
    if (op->getType() != P::ASSIGN)
      compound = binary_op(op->getType());
    P::ExprContext *lhs = exprs[0];
    auto *prim = dynamic_cast<P::PrimaryExprContext *>(lhs);
    auto *lvalue = prim ? dynamic_cast<P::LvalueExprContext *>(prim->primary()) : nullptr;
    auto *field = dynamic_cast<P::FieldExprContext *>(lhs);
    if (lvalue && !(lvalue->map() ? lvalue->map()->index : lvalue->var()->index).empty()) {
      diags_.error(span(lhs), "Can not assign through a pointer: only maps and variables take "
                              "assignments");
      return nullptr;
    }
    if (lvalue && !lvalue->post) {
      if (auto *m = lvalue->map()) {
        auto s = std::make_unique<MapAssignStmt>();
        s->span = span(ctx);
        s->map = map(m);
        s->compound = compound;
        s->value = expr(exprs[1]);
        return block_value_assigned(std::move(s));
      }
      auto s = std::make_unique<VarAssignStmt>();
      s->span = span(ctx);
      s->var = var(lvalue->var());
      s->compound = compound;
      s->value = expr(exprs[1]);
      return s;
    }
    auto *ident = prim ? dynamic_cast<P::IdentExprContext *>(prim->primary()) : nullptr;
    if (ident && !ident->call && !ident->post && text(ident->IDENT()) == "_" &&
        op->getType() == P::ASSIGN) { // `_ = expr;` (bpftrace 0.22): the value is discarded
      auto s = std::make_unique<ExprStmt>();
      s->span = span(ctx);
      s->expr = expr(exprs[1]);
      return s;
    }
    if (field && field->INT() && op->getType() == P::ASSIGN) {
      diags_.error(span(ctx), "Tuples are immutable once created. Consider creating a new tuple "
                              "and assigning it instead.");
      return nullptr;
    }
    // bison only accepts a map or variable here, so it stops at the operator.
    diags_.error(bison_span(op), "syntax error, unexpected " + token_word(op, *file_of(op).text) +
                                     ", expecting }");
    return nullptr;
  }

  // `@m = { stmts; count() }`: { stmts; @m = count() }, so that an aggregation is still assigned
  // to its map directly.
  StmtPtr block_value_assigned(std::unique_ptr<MapAssignStmt> s) {
    auto *be = s->value->kind == ExprKind::Block ? &s->value->as<BlockExpr>() : nullptr;
    if (s->compound || !be || !be->value || be->value->kind != ExprKind::Call)
      return s;
    auto out = std::move(be->block);
    s->value = std::move(be->value);
    out->stmts.push_back(std::move(s));
    return out;
  }

  template <class T> std::unique_ptr<T> make(SourceSpan s) {
    auto e = std::make_unique<T>();
    e->span = s;
    return e;
  }

  ExprPtr expr(P::ExprContext *ctx) {
    Nest nest(*this);
    if (nest.too_deep(span(ctx)))
      return make<IntegerExpr>(span(ctx));
    if (auto *c = dynamic_cast<P::PrimaryExprContext *>(ctx))
      return primary(c->primary());
    if (auto *c = dynamic_cast<P::BinaryExprContext *>(ctx)) {
      auto e = make<BinaryExpr>(span(ctx));
      e->op = binary_op(c->op->getType());
      e->lhs = expr(c->expr(0));
      e->rhs = expr(c->expr(1));
      return e;
    }
    if (auto *c = dynamic_cast<P::UnaryExprContext *>(ctx))
      return unary(c);
    if (auto *c = dynamic_cast<P::TernaryExprContext *>(ctx)) {
      auto e = make<TernaryExpr>(span(ctx));
      e->cond = expr(c->expr(0));
      e->then_expr = expr(c->expr(1));
      e->else_expr = expr(c->expr(2));
      return e;
    }
    if (auto *c = dynamic_cast<P::CastExprContext *>(ctx)) {
      auto e = make<CastExpr>(span(ctx));
      e->to = type_spec(c->typeName());
      e->operand = expr(c->expr());
      return e;
    }
    auto *c = dynamic_cast<P::FieldExprContext *>(ctx);
    auto e = make<FieldExpr>(span(c->expr(0)->getStart(), c->field));
    e->base = expr(c->expr(0));
    // args->x is args.x (tracepoint and API arguments are not behind a pointer in gpubt).
    bool args = e->base->kind == ExprKind::Builtin && e->base->as<BuiltinExpr>().name == "args";
    e->arrow = c->op->getType() == P::PTR && !args;
    Token *name = c->field;
    e->field = text(name);
    e->field_span = token_span(name);
    return indexed(std::move(e), c->index, span(ctx));
  }

  ExprPtr unary(P::UnaryExprContext *c) {
    UnaryOp op = unary_op(c->op->getType());
    // bison folds "-" and an integer literal into one negative literal.
    if (op == UnaryOp::Neg)
      if (auto *p = dynamic_cast<P::PrimaryExprContext *>(c->expr()))
        if (auto *lit = dynamic_cast<P::IntLitContext *>(p->primary())) {
          auto e = integer(lit);
          auto &i = e->as<IntegerExpr>();
          i.value = int64_t(~uint64_t(i.value) + 1);
          i.is_unsigned = false;
          i.span = span(c);
          return e;
        }
    auto e = make<UnaryExpr>(token_span(c->op));
    e->op = op;
    e->operand = expr(c->expr());
    return e;
  }

  ExprPtr integer(P::IntLitContext *c) {
    auto e = make<IntegerExpr>(span(c));
    IntLiteral lit = decode_int(text(c->INT()));
    if (lit.value) {
      e->value = *lit.value;
      e->is_unsigned = *lit.value < 0; // a literal is never negative: it was above INT64_MAX
    } else
      diags_.error(e->span, lit.error);
    return e;
  }

  ExprPtr primary(P::PrimaryContext *ctx) {
    if (auto *c = dynamic_cast<P::IntLitContext *>(ctx))
      return integer(c);
    if (auto *c = dynamic_cast<P::BoolLitContext *>(ctx)) {
      auto e = make<IntegerExpr>(span(c));
      e->value = c->TRUE() ? 1 : 0;
      e->as<IntegerExpr>().is_bool = true;
      return e;
    }
    if (auto *c = dynamic_cast<P::StringLitContext *>(ctx)) {
      auto e = make<StringExpr>(span(c));
      Token *t = c->STRING()->getSymbol();
      StringLiteral lit = decode_string(text(t));
      if (!lit.error.empty()) {
        SourceSpan s = bison_span(t); // bpftrace's lexer reports from the run's start
        s.end_col = token_span(t).col + uint32_t(lit.error_end);
        diags_.error(s, lit.error);
      }
      e->value = std::move(lit.value);
      return e;
    }
    if (auto *c = dynamic_cast<P::LvalueExprContext *>(ctx)) {
      ExprPtr target = c->map() ? ExprPtr(map(c->map())) : ExprPtr(var(c->var()));
      auto &index = c->map() ? c->map()->index : c->var()->index;
      if (!index.empty() && c->post)
        diags_.error(span(c), "The ++ and -- operators apply to maps and variables, not to p[i]");
      if (!index.empty())
        return indexed(std::move(target), index, span(c));
      if (!c->post)
        return target;
      auto e = make<UnaryExpr>(span(c));
      e->op = c->post->getType() == P::INCREMENT ? UnaryOp::PostInc : UnaryOp::PostDec;
      e->operand = std::move(target);
      return e;
    }
    if (auto *c = dynamic_cast<P::PreIncDecContext *>(ctx)) {
      auto e = make<UnaryExpr>(span(c));
      bool inc = c->pre->getType() == P::INCREMENT;
      e->op = inc ? UnaryOp::PreInc : UnaryOp::PreDec;
      if (c->IDENT()) {
        diags_.error(token_span(c->pre), std::string("The ") + (inc ? "++" : "--") +
                                             " operator must be applied to a map or variable");
        e->operand = make<IntegerExpr>(span(c));
        return e;
      }
      e->operand = c->map() ? ExprPtr(map(c->map())) : ExprPtr(var(c->var()));
      return e;
    }
    if (auto *c = dynamic_cast<P::AddressOfContext *>(ctx)) {
      auto e = make<UnaryExpr>(span(c));
      e->op = UnaryOp::AddressOf;
      auto v = make<VariableExpr>(span(c->VAR()));
      v->name = expansions_.variable(text(c->VAR()));
      e->operand = std::move(v);
      return e;
    }
    if (auto *c = dynamic_cast<P::IdentExprContext *>(ctx))
      return ident(c);
    if (auto *c = dynamic_cast<P::TypeArgExprContext *>(ctx))
      return type_arg(c);
    if (auto *c = dynamic_cast<P::ParamExprContext *>(ctx))
      return param(c);
    if (auto *b = dynamic_cast<P::BlockExprContext *>(ctx))
      return block_expr(b->stmts(), span(b));
    if (auto *r = dynamic_cast<P::RecordExprContext *>(ctx))
      return record(r);
    if (dynamic_cast<P::TypeofExprContext *>(ctx)) {
      diags_.error(span(ctx), "typeof() is a type, not a value: use it in a cast, sizeof(), "
                              "`let $x: typeof(...)` or as a macro's argument");
      return make<IntegerExpr>(span(ctx));
    }
    auto *c = dynamic_cast<P::ParenExprContext *>(ctx);
    if (c->elems.size() == 1) // `(x)[i]` reads through x, `(1, "a")[1]` is an element
      return indexed(expr(c->elems[0]), c->index, span(c));
    auto e = make<TupleExpr>(span(c->LPAREN()->getSymbol(), c->RPAREN()->getSymbol()));
    for (auto *x : c->elems)
      e->elems.push_back(expr(x));
    return indexed(std::move(e), c->index, span(c));
  }

  // `(a = 1, b = "x")`: a tuple whose fields have names; a name given twice is an error.
  ExprPtr record(P::RecordExprContext *c) {
    auto e = make<TupleExpr>(span(c));
    auto &t = e->as<TupleExpr>();
    for (auto *f : c->recordField()) {
      std::string name = text(f->IDENT());
      if (std::find(t.names.begin(), t.names.end(), name) != t.names.end())
        diags_.error(token_span(f->IDENT()->getSymbol()),
                     "Named argument list already contains name: " + name);
      t.names.push_back(name);
      t.elems.push_back(expr(f->expr()));
    }
    return e;
  }

  // `{ stmts; value }`: the last statement, an expression without its `;`, is the value.
  ExprPtr block_expr(P::StmtsContext *ctx, SourceSpan at) {
    auto e = make<BlockExpr>(at);
    e->block = block(ctx, at);
    auto *last = ctx->children.empty() ? nullptr : dynamic_cast<P::StmtContext *>(ctx->children.back());
    if (last && !last->assignOp() && !e->block->stmts.empty() &&
        e->block->stmts.back()->kind == StmtKind::Expr) {
      e->value = std::move(e->block->stmts.back()->as<ExprStmt>().expr);
      e->block->stmts.pop_back();
    }
    return e;
  }

  // NAME(args) or NAME of a macro: its body, built again here with its parameters bound
  // (macros.h), as a block expression.
  ExprPtr expand_macro(P::IdentExprContext *c, P::MacroDefContext *def) {
    std::string name = text(def->IDENT());
    SourceSpan at = span(c);
    auto params = def->macroParam();
    auto args = c->expr();
    if (params.size() != args.size()) {
      diags_.error(at, "Call to macro '" + name + "' has " + std::to_string(args.size()) +
                           " argument(s); it takes " + std::to_string(params.size()));
      return make<IntegerExpr>(at);
    }
    if (expansions_.active(def)) {
      diags_.error(at, "Recursive macro call: '" + name + "'");
      return make<IntegerExpr>(at);
    }
    MacroExpansions::Frame frame;
    frame.def = def;
    frame.at = at;
    for (size_t i = 0; i < params.size(); ++i) {
      auto *p = params[i];
      std::string param = text(p->getStart());
      if (p->IDENT()) {
        frame.exprs[param] = args[i];
        continue;
      }
      ExprPtr arg = expr(args[i]); // in the caller's names
      bool want_var = p->VAR() != nullptr;
      ExprKind want = want_var ? ExprKind::Variable : ExprKind::Map;
      if (arg->kind != want || (!want_var && !arg->as<MapExpr>().keys.empty())) {
        diags_.error(arg->span, "Macro '" + name + "' takes " + (want_var ? "a variable" : "a map") +
                                    " for " + param);
        return make<IntegerExpr>(at);
      }
      (want_var ? frame.vars : frame.maps)[param] =
          want_var ? arg->as<VariableExpr>().name : arg->as<MapExpr>().name;
    }
    auto inner = expansions_.enter(std::move(frame));
    ExprPtr body = block_expr(def->block()->stmts(), at);
    // `macro fmt() { "hi\n" }`: a literal alone is the literal, where one must be written
    // (printf's format, as bpftrace head takes it).
    auto &b = body->as<BlockExpr>();
    if (b.block->stmts.empty() && b.value &&
        (b.value->kind == ExprKind::String || b.value->kind == ExprKind::Integer))
      return std::move(b.value);
    return body;
  }

  // A macro NAME takes the call when its arity fits; a builtin's or function's name called
  // with another arity is the builtin (bpftrace head: user macros override the stdlib only
  // with its signature).
  P::MacroDefContext *macro_for(P::IdentExprContext *c, const std::string &name) const {
    auto m = macros_.find(name);
    if (m == macros_.end() || c->post)
      return nullptr;
    bool stdlib_name = stdlib::find_function(name) || stdlib::find_builtin(name).info;
    if (stdlib_name && m->second->macroParam().size() != c->expr().size())
      return nullptr;
    return m->second;
  }

  // "uint8", "struct Foo", a typedef name, typeof(...), with its `*`s and `[N]`. A macro's
  // parameter written as a type (`a*`, `a[2]`) is the type its argument's typeof() names.
  TypeSpec type_spec(P::TypeNameContext *c) {
    TypeSpec t;
    if (c->typeofType())
      t = typeof_spec(c->typeofType());
    else if (c->INT_TYPE())
      t.name = text(c->INT_TYPE());
    else if (c->IDENT() && c->getStart() != c->IDENT()->getSymbol())
      t.name = text(c->getStart()) + " " + text(c->IDENT());
    else if (auto v = typeof_value(text(c->IDENT())))
      t = std::move(*v);
    else
      t.name = text(c->IDENT());
    t.pointer_depth += static_cast<int>(c->MUL().size());
    if (auto *a = c->arraySuffix()) {
      if (t.array_count)
        diags_.error(span(a), "Arrays of arrays are not supported");
      IntLiteral n = a->INT() ? decode_int(text(a->INT())) : IntLiteral{0, ""};
      if (!n.value || *n.value < (a->INT() ? 1 : 0) || *n.value > 65536)
        diags_.error(span(a), "An array's size must be a number from 1 to 65536");
      t.array_count = uint32_t(n.value.value_or(0));
    }
    return t;
  }

  TypeSpec typeof_spec(P::TypeofTypeContext *c) {
    if (c->typeName())
      return type_spec(c->typeName());
    if (auto t = typeof_value(c->expr())) // typeof(t) of a macro's typeof() parameter
      return std::move(*t);
    TypeSpec t;
    t.of = expr(c->expr());
    return t;
  }

  // The type X names when it is typeof(...), directly or as a macro's parameter bound to one
  // (built in the caller's names: typeof($x) is the caller's $x); none if X is not one.
  std::optional<TypeSpec> typeof_value(const std::string &param) {
    auto arg = expansions_.argument(param);
    if (!arg)
      return std::nullopt;
    auto inner = expansions_.enter_caller(*arg);
    return typeof_value(arg->expr);
  }
  std::optional<TypeSpec> typeof_value(P::ExprContext *x) {
    auto *prim = dynamic_cast<P::PrimaryExprContext *>(x);
    if (!prim)
      return std::nullopt;
    if (auto *t = dynamic_cast<P::TypeofExprContext *>(prim->primary()))
      return typeof_spec(t->typeofType());
    auto *id = dynamic_cast<P::IdentExprContext *>(prim->primary());
    if (!id || id->call || id->post)
      return std::nullopt;
    return typeof_value(text(id->IDENT()));
  }

  // sizeof(uint16), sizeof(int8 *): a literal; sizeof(struct Foo) once clang has read it.
  // No other function takes a type.
  // offsetof(struct Foo, bar.x): the field's offset once clang has read the type.
  ExprPtr type_arg(P::TypeArgExprContext *c) {
    std::string name = text(c->getStart());
    auto *t = c->typeName();
    bool offsetof = name == "offsetof";
    if (name != "sizeof" && !offsetof) {
      diags_.error(span(t), name + "() does not take a type");
      return make<IntegerExpr>(span(c));
    }
    if (offsetof == c->fields.empty()) {
      diags_.error(span(c), offsetof ? "offsetof() takes a struct type and a field: "
                                       "offsetof(struct Foo, x)"
                                     : "sizeof() takes one type");
      return make<IntegerExpr>(span(c));
    }
    if (!t->INT_TYPE() || t->arraySuffix() || offsetof) {
      auto e = make<SizeofTypeExpr>(span(c));
      e->of = type_spec(t);
      for (auto *f : c->fields)
        e->fields.push_back(text(f));
      return e;
    }
    auto e = make<IntegerExpr>(span(c));
    std::string type = text(t->INT_TYPE());
    size_t digits = type.find_first_of("0123456789");
    e->value = t->MUL().empty() ? std::stoi(type.substr(digits)) / 8 : 8;
    return e;
  }

  // $N as a number, $# as the count; str($N) is handled by param_string.
  ExprPtr param(P::ParamExprContext *c) {
    auto e = make<IntegerExpr>(span(c));
    if (c->PARAMCOUNT()) {
      e->value = static_cast<int64_t>(params_.values.size());
      return e;
    }
    std::string name = text(c->PARAM());
    size_t n = std::strtoull(name.c_str() + 1, nullptr, 10);
    if (n == 0) {
      diags_.error(span(c), "param " + name + " is out of integer range [1, " +
                                std::to_string(INT64_MAX) + "]");
      return e;
    }
    if (auto v = params_.number(n))
      e->value = *v;
    else
      diags_.error(span(c), name + " used numerically but given \"" + params_.get(n, false) +
                                "\". Try using str(" + name + ").");
    return e;
  }

  static P::ParamExprContext *param_of(P::ExprContext *x) {
    auto *prim = dynamic_cast<P::PrimaryExprContext *>(x);
    return prim ? dynamic_cast<P::ParamExprContext *>(prim->primary()) : nullptr;
  }

  // str($N), str($N, LEN) and str($N + K) are the parameter's text (from its K-th character),
  // a string literal, as in bpftrace.
  ExprPtr param_string(P::IdentExprContext *c) {
    P::ParamExprContext *p = param_of(c->expr(0));
    int64_t skip = 0;
    if (auto *sum = dynamic_cast<P::BinaryExprContext *>(c->expr(0)); sum && sum->PLUS()) {
      for (int side = 0; side < 2 && !p; ++side)
        if ((p = param_of(sum->expr(side)))) {
          auto k = expr(sum->expr(1 - side));
          if (k->kind != ExprKind::Integer)
            return nullptr; // not a constant offset: str() of a number, as written
          skip = k->as<IntegerExpr>().value;
        }
    }
    if (!p)
      return nullptr;
    auto e = make<StringExpr>(span(c));
    if (p->PARAMCOUNT()) {
      diags_.error(span(c), "use $#, not str($#)");
      return e;
    }
    e->value = params_.get(std::strtoull(text(p->PARAM()).c_str() + 1, nullptr, 10), true);
    e->value = skip > 0 && size_t(skip) < e->value.size() ? e->value.substr(skip)
               : skip > 0                                 ? ""
                                                          : e->value;
    if (c->expr().size() == 2) {
      auto len = expr(c->expr(1));
      if (len->kind == ExprKind::Integer && len->as<IntegerExpr>().value > 0)
        e->value = e->value.substr(0, len->as<IntegerExpr>().value - 1);
    }
    return e;
  }

  // ustack(py, 8) and its kin: a builtin with its arguments as written (a mode name, then a
  // frame count literal, both optional). Anything else there is reported here.
  ExprPtr stack_call(P::IdentExprContext *c, const std::string &name) {
    auto e = make<BuiltinExpr>(span(c));
    e->name = name;
    auto &args = e->stack.emplace();
    auto xs = c->expr();
    for (size_t i = 0; i < xs.size(); ++i) {
      auto value = expr(xs[i]);
      bool word = value->kind == ExprKind::Builtin && !value->as<BuiltinExpr>().stack;
      if (i == 0 && word) {
        args.mode = value->as<BuiltinExpr>().name;
        args.mode_span = value->span;
      } else if (value->kind == ExprKind::Integer && i == xs.size() - 1 && i <= 1) {
        args.frames = value->as<IntegerExpr>().value;
        args.frames_span = span(xs[i]);
      } else {
        diags_.error(span(xs[i]), name + "() takes a mode name (" + name + "(py)) and then a "
                                         "frame count literal (" + name + "(py, 8)), both optional");
        break;
      }
    }
    return e;
  }

  // delete(@m, k) and has_key(@m, k) (bpftrace 0.22): k goes into the map access, as 0.17's
  // delete(@m[k]) writes it; a tuple k is the whole key of a multi-key map.
  static void move_key_into_map(CallExpr &call) {
    if ((call.name != "delete" && call.name != "has_key") || call.args.size() != 2 ||
        call.args[0]->kind != ExprKind::Map || !call.args[0]->as<MapExpr>().keys.empty())
      return;
    call.args[0]->as<MapExpr>().keys.push_back(std::move(call.args[1]));
    call.args.pop_back();
  }

  // nsecs(monotonic|boot|tai|sw_tai) (bpftrace 0.21): the builtin of that clock.
  ExprPtr nsecs_clock(P::IdentExprContext *c) {
    auto e = make<BuiltinExpr>(span(c));
    std::string clock = c->expr(0)->getText();
    e->name = clock == "monotonic" ? "nsecs" : "nsecs(" + clock + ")";
    if (clock != "monotonic" && clock != "boot" && clock != "tai" && clock != "sw_tai") {
      diags_.error(span(c->expr(0)), "Invalid timestamp mode: " + clock +
                                         " (nsecs() takes monotonic, boot, tai or sw_tai)");
      e->name = "nsecs";
    }
    return e;
  }

  ExprPtr ident(P::IdentExprContext *c) {
    std::string name = text(c->IDENT());
    if (!c->call && !c->post)
      if (auto arg = expansions_.argument(name)) { // a macro's parameter: its argument, again
        auto inner = expansions_.enter_caller(*arg);
        return expr(arg->expr);
      }
    if (auto *def = macro_for(c, name))
      return expand_macro(c, def);
    if (c->call && name == "sizeof" && c->expr().size() == 1)
      if (auto t = typeof_value(c->expr(0))) { // sizeof(typeof(...)), sizeof(a macro's type)
        auto e = make<SizeofTypeExpr>(span(c));
        e->of = std::move(*t);
        return e;
      }
    if ((name == "__builtin_config" && !c->call) ||
        (name == "config" && c->call && c->expr().empty())) {
      auto e = make<TupleExpr>(span(c));
      e->as<TupleExpr>().config = true;
      return e;
    }
    // Since bpftrace 0.23 a builtin is also `__builtin_NAME` and a call without arguments.
    if (name.rfind("__builtin_", 0) == 0 && stdlib::find_builtin(name.substr(10)).info)
      name = name.substr(10);
    if (c->call && c->expr().empty() && !stdlib::find_function(name) &&
        stdlib::find_builtin(name).info) {
      auto e = make<BuiltinExpr>(span(c));
      e->name = name;
      return e;
    }
    if (c->call && name == "str" && !c->expr().empty() && c->expr().size() <= 2)
      if (auto e = param_string(c))
        return e;
    if (c->call && (name == "ustack" || name == "kstack" || name == "pystack"))
      return stack_call(c, name);
    if (c->call && name == "nsecs" && c->expr().size() == 1)
      return nsecs_clock(c);
    if (c->call) {
      auto e = make<CallExpr>(span(c));
      e->name = name;
      e->expanded_from = expansions_.call_sites();
      for (auto *x : c->expr())
        e->args.push_back(expr(x));
      move_key_into_map(*e);
      return e;
    }
    if (c->post) {
      diags_.error(span(c->IDENT()), std::string("The ") +
                                         (c->post->getType() == P::INCREMENT ? "++" : "--") +
                                         " operator must be applied to a map or variable");
    }
    auto e = make<BuiltinExpr>(span(c->IDENT()));
    e->name = name;
    return e;
  }

  // p[i][j]: an element of an array value, or *(*(p + i) + j) through a pointer.
  ExprPtr indexed(ExprPtr base, const std::vector<P::ExprContext *> &index, SourceSpan s) {
    for (auto *i : index) {
      auto e = make<IndexExpr>(s);
      e->base = std::move(base);
      e->index = expr(i);
      base = std::move(e);
    }
    return base;
  }

  std::unique_ptr<MapExpr> map(P::MapContext *c) {
    auto m = make<MapExpr>(span(c));
    m->name = expansions_.map(text(c->MAP()));
    if (!c->index.empty()) // the indexes are read through the value, not part of the map
      m->span = span(c->MAP()->getSymbol(), c->RBRACKET(0)->getSymbol());
    for (auto *k : c->keys)
      m->keys.push_back(expr(k));
    return m;
  }

  std::unique_ptr<VariableExpr> var(P::VarContext *c) {
    auto v = make<VariableExpr>(span(c->VAR()));
    v->name = expansions_.variable(text(c->VAR()));
    return v;
  }
};

} // namespace

std::unique_ptr<Program> build_ast(P::ProgramContext *tree, antlr4::BufferedTokenStream &tokens,
                                   const std::string &source, const PositionalParams &params,
                                   Diagnostics &diags, const StdlibMacros &stdlib,
                                   const std::vector<ImportedScript> &imports) {
  auto errors = [&] {
    size_t n = 0;
    for (const auto &d : diags.all())
      n += d.severity == Severity::Error;
    return n;
  };
  size_t before = errors();
  auto prog = Builder(tokens, source, params, diags, stdlib, imports).program(tree);
  if (errors() == before)
    scope_variables(*prog, diags);
  return errors() == before ? std::move(prog) : nullptr;
}

} // namespace gpubt::frontend::parse
