// The type checker. Walks the program twice, as bpftrace 0.17's semantic analyser does: the
// first walk reports what is wrong regardless of types, and the second (its "final pass"),
// run only if the first found nothing, reports operand, printf and map-key errors.
#include "frontend/passes/check_types.h"
#include "frontend/passes/builtin_at_point.h"
#include "frontend/passes/check_array_cast.h"
#include "frontend/passes/check_aggregation_args.h"
#include "frontend/passes/check_messages.h"
#include "frontend/passes/constant_int.h"
#include "frontend/passes/tuple_index.h"

#include <algorithm>
#include <set>

#include <arpa/inet.h>

#include "frontend/ast_walk.h"
#include "frontend/nearest_name.h"
#include "frontend/passes/printf_format.h"
#include "stdlib/builtins.h"
#include "stdlib/enums.h"
#include "stdlib/stack_builtins.h"
#include "stdlib/functions.h"
#include "stdlib/registers.h"

namespace gpubt::frontend {
namespace {

using namespace check;
using stdlib::ArgRule;
using stdlib::FunctionKind;

// Where an expression's value goes: calls are legal in some places only.
enum class Use { Value, Statement, MapValue, MapKey };

bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq && op <= BinaryOp::Ge; }
bool is_arithmetic(BinaryOp op) { return op <= BinaryOp::Mod; }

// One conversion must not write gigabytes per event (a terminal line is far narrower).
constexpr int64_t kMaxPrintfWidth = 1024;
// The largest key, value, tuple or printf record a probe may build (see check_built_size).
constexpr uint64_t kMaxBuiltBytes = 1024;

class Checker {
public:
  Checker(const Program &program, const SemanticInfo &info, const SemanticOptions &options,
          Diagnostics &diags)
      : program_(program), info_(info), options_(options), diags_(diags) {}

  void run() {
    if (report_unknown_function())
      return; // bpftrace stops at the first unknown function
    walk();
    if (errors_ > 0)
      return;
    final_ = true;
    walk();
  }

private:
  void error(const SourceSpan &s, std::string msg) {
    diags_.error(s, std::move(msg));
    ++errors_;
  }

  bool report_unknown_function() {
    const CallExpr *unknown = nullptr;
    for (const auto &p : program_.probes)
      frontend::for_each_expr(*p, [&](const Expr &e) {
        if (!unknown && e.kind == ExprKind::Call && !e.as<CallExpr>().id)
          unknown = &e.as<CallExpr>();
      });
    if (!unknown)
      return false;
    error(prefix(unknown->span, unknown->name.size()),
          "Unknown function: " + unknown->name +
              did_you_mean(unknown->name, stdlib::function_names()));
    return true;
  }

  void walk() {
    for (const auto &p : program_.probes) {
      probe_ = p.get();
      declared_.clear();
      var_types_.clear();
      auto vit = info_.vars.find(probe_);
      probe_vars_ = vit != info_.vars.end() ? &vit->second : nullptr;
      if (p->predicate)
        expr(*p->predicate, Use::Value);
      if (p->body)
        block(*p->body);
    }
  }

  void block(const BlockStmt &b) {
    for (const auto &s : b.stmts)
      stmt(*s);
  }

  void stmt(const Stmt &s) {
    switch (s.kind) {
    case StmtKind::Expr:
      expr(*s.as<ExprStmt>().expr, Use::Statement);
      break;
    case StmtKind::MapAssign:
      map_assign(s.as<MapAssignStmt>());
      break;
    case StmtKind::VarAssign:
      var_assign(s.as<VarAssignStmt>());
      break;
    case StmtKind::If: {
      const auto &i = s.as<IfStmt>();
      expr(*i.cond, Use::Value);
      if (final_ && !i.cond->type.is_integer_like() && !i.cond->type.is_none())
        error(i.cond->span, "Invalid condition in if(): " + kind_name(i.cond->type));
      block(*i.then_block);
      if (i.else_block)
        block(*i.else_block);
      break;
    }
    case StmtKind::Block:
      block(s.as<BlockStmt>());
      break;
    case StmtKind::Jump:
      jump(s.as<JumpStmt>());
      break;
    case StmtKind::While: {
      const auto &w = s.as<WhileStmt>();
      if (w.each_map) {
        declared_.insert(w.each_var->key());
        each_map(w);
      } else {
        expr(*w.cond, Use::Value);
      }
      // Range for and while loops are plain device loops; a map walk would be done by every
      // thread of the launch, each reading the whole map.
      if (!final_ && w.each_map)
        refuse_in_gpu_probes(w.span, "for loops over maps",
                             ": every GPU thread would walk the map");
      if (final_ && w.cond && !w.cond->type.is_integer_like() && !w.cond->type.is_none())
        error(w.cond->span, std::string(w.is_for ? "Invalid range in for loop: " :
                                                   "Invalid condition in while(): ") +
                                kind_name(w.cond->type));
      ++loops_;
      block(*w.body);
      --loops_;
      if (w.step)
        stmt(*w.step);
      break;
    }
    }
  }

  // WHAT (plural) is an error at SPAN in a probe with a gpu attach point, WHY appended.
  void refuse_in_gpu_probes(const SourceSpan &span, const std::string &what,
                            const std::string &why = "") {
    for (const auto &ap : probe_->attach_points)
      if (is_gpu(ap.provider))
        return error(span, what + " are not available in gpu probes" + why);
  }

  // for ($kv : @m): a map with keys, its values plain or count, sum, min, max or avg (read over
  // all CPUs); stats, hist, lhist and tseries refused, as bpftrace refuses them.
  void each_map(const WhileStmt &w) {
    if (!final_)
      return;
    const MapInfo *m = map_info(w.each_map->name);
    if (!m)
      return error(w.each_map->span, "Undefined map: " + w.each_map->name);
    if (m->key.is_none())
      return error(w.each_map->span, "Maps used in for loops must have keys to iterate over");
    TypeKind k = m->value.kind;
    if (k == TypeKind::Stats || k == TypeKind::Hist || k == TypeKind::Lhist ||
        k == TypeKind::Tseries)
      error(w.each_map->span, "Loop expression does not support type: " + kind_name(m->value));
  }

  void jump(const JumpStmt &j) {
    if (final_ || j.jump == Jump::Return || loops_ > 0)
      return;
    error(j.span, std::string(j.jump == Jump::Break ? "break" : "continue") +
                      " can only be used inside a loop");
  }

  const MapInfo *map_info(const std::string &name) const {
    auto it = info_.maps.find(name);
    return it != info_.maps.end() ? &it->second : nullptr;
  }

  void map_assign(const MapAssignStmt &a) {
    const Expr &value = *a.value;
    bool direct_agg = false;
    if (value.kind == ExprKind::Call && !a.compound) {
      const auto &id = value.as<CallExpr>().id;
      direct_agg = id && stdlib::function_info(*id).kind == FunctionKind::Aggregation;
    }
    expr(value, direct_agg ? Use::MapValue : Use::Value);
    map_keys(*a.map, a.map->span);
    const MapInfo *m = map_info(a.map->name);
    if (!m)
      return;
    const Type &have = m->value;
    const Type &got = value.type;
    if (!final_) {
      // `@p += n` on a pointer map adds n pointees: the result stays a pointer.
      bool pointer_step = a.compound && have.kind == TypeKind::Pointer && got.is_integer_like();
      if (!have.is_none() && !got.is_none() && got.kind != TypeKind::Tuple &&
          !same_kind(have, got) && !pointer_step)
        error(a.map->span, "Type mismatch for " + a.map->name +
                               ": trying to assign value of type '" + type_name_in_messages(got) +
                               "' when map already contains a value of type '" +
                               type_name_in_messages(have)); // bpftrace 0.17 drops the last quote
      return;
    }
    // One map keeps one set of intervals (bpftrace's words).
    if (have.kind == TypeKind::Tseries && got.kind == TypeKind::Tseries && have != got)
      error(value.span, "Different tseries bounds in a single map unsupported");
    if (have.kind == TypeKind::Tuple && got.kind == TypeKind::Tuple && !tuples_compatible(have, got))
      error(between(a.map->span, value.span, a.compound ? 2 : 1), "Tuple type mismatch: " + type_name_in_messages(have) +
                                       " != " + type_name_in_messages(got) + ".");
    if (got.is_none()) {
      if (have.is_none())
        error(a.map->span, "Undefined map: " + a.map->name);
      error(value.span, "Invalid expression for assignment: none");
    }
  }

  void var_assign(const VarAssignStmt &a) {
    const Expr &value = *a.value;
    expr(value, Use::Value);
    const std::string &name = a.var->name, key = a.var->key();
    if (a.compound && !declared_.count(key) && !final_)
      error(a.var->span, "Undefined or undeclared variable: " + name);
    auto it = var_types_.find(key);
    if (!final_ && it != var_types_.end() && !value.type.is_none() && !it->second.is_none() &&
        !same_kind(it->second, value.type)) {
      const Type &have = probe_vars_ && probe_vars_->count(key) ? probe_vars_->at(key) : it->second;
      error(between(a.var->span, value.span, a.compound ? 2 : 1),
            "Type mismatch for " + name + ": trying to assign value of type '" +
                type_name_in_messages(value.type) +
                "' when variable already contains a value of type '" +
                type_name_in_messages(have) + "'");
    }
    if (final_ && value.kind != ExprKind::Tuple) // a tuple literal was checked as one
      check_built_size(value.span, "value of " + name, value.type.size);
    if (final_ && probe_vars_ && probe_vars_->count(key)) { // a record of other fields
      const Type &have = probe_vars_->at(key);
      if (have.kind == TypeKind::Tuple && value.type.kind == TypeKind::Tuple &&
          (have.is_named_tuple() || value.type.is_named_tuple()) &&
          !tuples_compatible(have, value.type))
        error(between(a.var->span, value.span, a.compound ? 2 : 1),
              "Type mismatch for " + name + ": trying to assign value of type '" +
                  type_name_in_messages(value.type) +
                  "' when variable already contains a value of type '" +
                  type_name_in_messages(have) + "'");
    }
    declared_.insert(key);
    if (it == var_types_.end())
      var_types_[key] = value.type;
  }

  // Keys of a map access, and (final pass) whether they match the map's key type.
  void map_keys(const MapExpr &m, const SourceSpan &span) {
    for (const auto &k : m.keys)
      expr(*k, Use::MapKey);
    if (!final_)
      return;
    const MapInfo *info = map_info(m.name);
    if (!info || info->value.is_none())
      return;
    if (oversized_maps_.insert(m.name).second) {
      check_built_size(m.span, "key of " + m.name, info->key.size);
      check_built_size(m.span, "value of " + m.name, info->value.size);
    }
    std::vector<Type> expected;
    if (info->key.kind == TypeKind::Tuple && !info->key.elems.empty() &&
        !info->key.is_named_tuple()) // a record is one key
      expected = info->key.elems;
    else if (!info->key.is_none())
      expected = {info->key};
    std::vector<Type> got;
    if (is_whole_key(m))
      got = m.keys[0]->type.elems;
    else
      for (const auto &k : m.keys)
        got.push_back(k->type);
    bool ok = expected.size() == got.size();
    for (size_t i = 0; ok && i < expected.size(); ++i)
      ok = got[i].is_none() || key_compatible(expected[i], got[i]);
    if (ok)
      return;
    auto list = [](const std::vector<Type> &ts) {
      std::string s = "[";
      for (size_t i = 0; i < ts.size(); ++i)
        s += (i ? ", " : "") + key_name(ts[i]);
      return s + "]";
    };
    error(span, "Argument mismatch for " + m.name + ": trying to access with arguments: " +
                      list(got) + " when map expects arguments: " + list(expected));
  }

  // A map read (also as a call argument: then errors point at the call, as bpftrace's do).
  void map_read(const MapExpr &m, const SourceSpan &span, bool whole_map = false) {
    if (!whole_map)
      map_keys(m, span);
    const MapInfo *info = map_info(m.name);
    if (final_ && (!info || info->value.is_none()))
      error(span, "Undefined map: " + m.name);
  }

  void expr(const Expr &e, Use use) {
    switch (e.kind) {
    case ExprKind::Integer:
    case ExprKind::String:
      break;
    case ExprKind::Builtin:
      builtin(e.as<BuiltinExpr>());
      break;
    case ExprKind::Variable: {
      const std::string &name = e.as<VariableExpr>().name;
      bool positional = name.size() > 1 && std::all_of(name.begin() + 1, name.end(), ::isdigit);
      if (!final_ && !positional && !declared_.count(e.as<VariableExpr>().key()))
        error(e.span, "Undefined or undeclared variable: " + name);
      break;
    }
    case ExprKind::Map:
      map_read(e.as<MapExpr>(), e.span);
      break;
    case ExprKind::Call:
      call(e.as<CallExpr>(), use);
      break;
    case ExprKind::Binary:
      binary(e.as<BinaryExpr>());
      break;
    case ExprKind::Unary:
      unary(e.as<UnaryExpr>());
      break;
    case ExprKind::Ternary: {
      const auto &t = e.as<TernaryExpr>();
      // `c ? printf(..) : printf(..);` as a statement: its arms may be statements too.
      Use arm = use == Use::Statement ? Use::Statement : Use::Value;
      expr(*t.cond, Use::Value);
      expr(*t.then_expr, arm);
      expr(*t.else_expr, arm);
      if (!final_)
        break;
      if (t.cond->type.kind == TypeKind::String)
        error(e.span, "Invalid condition in ternary: " + kind_name(t.cond->type));
      else if (!t.then_expr->type.is_none() && !t.else_expr->type.is_none() &&
               !same_kind(t.then_expr->type, t.else_expr->type))
        error(e.span, "Ternary operator must return the same type: have '" +
                          kind_name(t.then_expr->type) + "' and '" +
                          kind_name(t.else_expr->type) + "'");
      break;
    }
    case ExprKind::Cast: {
      const auto &c = e.as<CastExpr>();
      expr(*c.operand, Use::Value);
      if (c.to.of) // typeof(x): x is not evaluated, but what it names must exist
        expr(*c.to.of, Use::Value);
      if (final_)
        break;
      SourceSpan type_span =
          c.to.of || c.to.array_count
              ? e.span
              : prefix(e.span, c.to.name.size() + c.to.pointer_depth + (c.to.pointer_depth ? 3 : 2));
      Type named = spec_element_type(c.to, options_.c_types);
      if (named.is_none() && !c.to.of)
        error(type_span, "Unknown struct/union: '" + c.to.name + "'");
      else if (c.to.array_count) {
        refuse_in_gpu_probes(e.span, "casts to arrays");
        if (auto msg = array_cast_error(c, options_.c_types))
          error(e.span, *msg);
      } else if (named.kind == TypeKind::Record || named.kind == TypeKind::Array)
        error(type_span, "Cannot cast to struct type \"" + to_string(named) + "\"");
      else if (!c.operand->type.is_none() && !c.operand->type.is_integer_like() &&
               !c.operand->type.is_castable_aggregate())
        error(type_span, "Casts are not supported for type: \"" +
                             type_name_in_messages(c.operand->type) + "\"");
      break;
    }
    case ExprKind::Field:
      field(e.as<FieldExpr>());
      break;
    case ExprKind::Index:
      index(e.as<IndexExpr>());
      break;
    case ExprKind::SizeofType: {
      const auto &s = e.as<SizeofTypeExpr>();
      if (s.of.of)
        expr(*s.of.of, Use::Value);
      if (!final_ && e.type.is_none() && !s.of.of)
        error(e.span, "Unknown struct/union: '" + s.of.name + "'");
      else if (!final_ && !s.fields.empty() &&
               !(options_.c_types && options_.c_types->offset_of(
                                         named_type(s.of.name, 0, options_.c_types), s.fields)))
        error(e.span, "Struct/union of type '" + s.of.name +
                          "' does not contain a field named '" + field_path(s.fields) + "'");
      break;
    }
    case ExprKind::Tuple:
      for (const auto &el : e.as<TupleExpr>().elems)
        expr(*el, Use::Value);
      if (final_)
        check_built_size(e.span, "tuple", e.type.size);
      break;
    case ExprKind::Block:
      block(*e.as<BlockExpr>().block);
      if (e.as<BlockExpr>().value)
        expr(*e.as<BlockExpr>().value, use);
      break;
    }
  }

  // BPF has no memset or memcpy call: LLVM must unroll them, and refuses past 1 KiB with "A call
  // to built-in function 'memset' is not supported" and no place in the script.
  void check_built_size(const SourceSpan &span, const std::string &what, uint64_t size) {
    if (size > kMaxBuiltBytes)
      error(span, what + ": " + std::to_string(size) + " bytes, more than the " +
                      std::to_string(kMaxBuiltBytes) + " a BPF program can build");
  }

  // ustack(py, 8) and its kin: a mode the builtin reads, a frame count it holds.
  bool stack_args(const BuiltinExpr &b) {
    const auto &s = *b.stack;
    if (!stdlib::is_stack_builtin(*b.id)) {
      error(b.span, b.name + " takes no arguments");
      return false;
    }
    if (s.mode)
      if (std::string why = stdlib::stack_mode_error(*b.id, *s.mode); !why.empty()) {
        error(s.mode_span, why);
        return false;
      }
    uint32_t most = stdlib::max_stack_frames(*b.id, s.mode == "py");
    if (s.frames && (*s.frames < 1 || *s.frames > int64_t(most))) {
      error(s.frames_span, b.name + (s.mode ? "(" + *s.mode + ", N)" : "(N)") +
                               " holds 1 to " + std::to_string(most) + " frames");
      return false;
    }
    return true;
  }

  static std::string field_path(const std::vector<std::string> &fields) {
    std::string out;
    for (const auto &f : fields)
      out += (out.empty() ? "" : ".") + f;
    return out;
  }

  // What a bare name in a script can be: builtins, the API catalogs' enum constants and the
  // script's own C constants.
  std::vector<std::string> identifiers() const {
    std::vector<std::string> names = stdlib::builtin_names();
    for (auto &c : stdlib::enum_constant_names())
      names.push_back(std::move(c));
    for (const auto &[name, value] : info_.c_types.constants)
      names.push_back(name);
    return names;
  }

  void builtin(const BuiltinExpr &b) {
    if (final_)
      return;
    if (!b.id && info_.c_types.constants.count(b.name))
      return; // an enum constant or #define of the script's C definitions
    if (!b.id && info_.c_types.find(b.name)) {
      if (!in_sizeof_)
        error(b.span, "'" + b.name + "' is a type: it can only be used in sizeof() or a cast");
      return;
    }
    if (!b.id && b.constant)
      return; // cudaSuccess, CUDA_ERROR_OUT_OF_MEMORY, hipMemcpyHostToDevice, ...
    if (!b.id) {
      error(b.span, "Unknown identifier: '" + b.name + "'" + did_you_mean(b.name, identifiers()));
      return;
    }
    if (b.stack && !stack_args(b))
      return;
    if (*b.id == stdlib::BuiltinId::Cpid && !options_.has_child) {
      error(b.span, "cpid cannot be used without child command");
      return;
    }
    for (const auto &ap : probe_->attach_points)
      if (auto msg = builtin_error_at(b, ap, options_)) {
        error(b.span, *msg);
        return;
      }
  }

  // a[i]: an array or a pointer (or an integer address); a literal index within the array.
  void index(const IndexExpr &x) {
    expr(*x.base, Use::Value);
    expr(*x.index, Use::Value);
    if (final_)
      return;
    const Type &base = x.base->type;
    if (base.is_none() || x.index->type.is_none())
      return;
    if (!x.index->type.is_integer_like()) {
      error(x.index->span, "The array index operator [] only accepts integer indices, got '" +
                               type_name_in_messages(x.index->type) + "'");
    } else if (base.kind == TypeKind::Tuple && !base.is_named_tuple()) {
      auto v = constant_int(*x.index);
      if (!v)
        error(x.index->span, "The array index operator [] only accepts integer indices known "
                             "before the program runs on tuples");
      else if (!x.tuple_elem)
        error(x.span, "Invalid tuple index: " + std::to_string(*v) + ". Found " +
                          std::to_string(base.elems.size()) + " elements in tuple.");
    } else if (base.kind == TypeKind::Array) {
      uint32_t n = base.elems[0].size ? base.size / base.elems[0].size : 0;
      auto v = literal_value(*x.index);
      if (!v)
        error(x.index->span, "The array index operator [] only accepts literal integer "
                             "indices on arrays");
      else if (*v < 0 || uint64_t(*v) >= n)
        error(x.span, "the index " + std::to_string(*v) + " is out of bounds for array of size " +
                          std::to_string(n));
    } else if (!base.is_integer_like()) {
      error(x.span, "The array index operator [] can not be used on expressions of type '" +
                        type_name_in_messages(base) + "'");
    }
  }

  // s.x, p->x and p.x (bpftrace head reads through the pointer; 0.17 refused it): the
  // operator fits the base, the record has the field.
  void record_field(const FieldExpr &f) {
    const Type &base = f.base->type;
    if (base.kind == TypeKind::Record && f.arrow) {
      error(f.span, "Can not dereference struct/union of type '" + type_name_in_messages(base) +
                        "'. It is not a pointer.");
      return;
    }
    Type rec = base.kind == TypeKind::Pointer ? base.elems[0] : base;
    if (options_.c_types)
      rec = options_.c_types->complete(rec);
    if (rec.kind != TypeKind::Record) {
      error(f.span, "Can not access field '" + f.field + "' on type '" +
                        type_name_in_messages(base) + "'");
    } else if (rec.is_record_stub()) {
      error(f.span, "Unknown struct/union: '" + rec.enum_name + "'");
    } else if (field_index(rec, f.field) < 0) {
      error(f.field_span, "Struct/union of type '" + rec.enum_name +
                              "' does not contain a field named '" + f.field + "'");
    }
  }

  // threadIdx.x in a gpu probe: one error at the whole spelling, naming the builtin it is.
  bool cuda_spelling(const FieldExpr &f) {
    if (final_ || f.base->kind != ExprKind::Builtin || !probe_ ||
        std::none_of(probe_->attach_points.begin(), probe_->attach_points.end(),
                     [](const AttachPoint &ap) { return is_gpu(ap.provider); }))
      return false;
    const auto &b = f.base->as<BuiltinExpr>();
    std::string ours = stdlib::builtin_for_cuda_spelling(b.name, f.field);
    if (b.id || b.constant || ours.empty())
      return false;
    error(f.span, "Unknown identifier: '" + b.name + "." + f.field + "' (in gpu probes, CUDA's " +
                      b.name + "." + f.field + " is " + ours + ")");
    return true;
  }

  void field(const FieldExpr &f) {
    if (cuda_spelling(f))
      return;
    expr(*f.base, Use::Value);
    if (!final_ && (f.base->type.kind == TypeKind::Record ||
                    f.base->type.kind == TypeKind::Pointer)) {
      record_field(f);
      return;
    }
    if (!final_ && f.type.is_none() && is_builtin(*f.base, BuiltinId::Args) &&
        options_.field_error &&
        !probe_->attach_points.empty()) {
      if (std::string msg = options_.field_error(probe_->attach_points[0], f.field); !msg.empty())
        error(f.field_span, std::move(msg));
    }
    if (!final_)
      return;
    const Type &base = f.base->type;
    if (base.is_named_tuple()) {
      if (field_index(base, f.field) < 0)
        error(f.field_span, "Record does not contain a field named '" + f.field + "'");
      return;
    }
    bool index = !f.field.empty() && std::all_of(f.field.begin(), f.field.end(), ::isdigit);
    if (!index || base.is_none())
      return;
    if (base.kind != TypeKind::Tuple)
      error(f.span, "Can not access index " + f.field + " on expression of type '" +
                        type_name_in_messages(base) + "'");
    else if (tuple_index(f.field) >= base.elems.size())
      error(f.span, "Invalid tuple index: " + f.field + ". Found " +
                        std::to_string(base.elems.size()) + " elements in tuple.");
  }

  void binary(const BinaryExpr &b) {
    expr(*b.lhs, Use::Value);
    expr(*b.rhs, Use::Value);
    if (!final_)
      return;
    const Type &l = b.lhs->type, &r = b.rhs->type;
    if (l.is_none() || r.is_none())
      return;
    std::string op(op_text(b.op));
    SourceSpan op_span = between(b.lhs->span, b.rhs->span, op.size());
    if (l.kind == TypeKind::String && r.kind == TypeKind::String) {
      if (b.op != BinaryOp::Eq && b.op != BinaryOp::Ne)
        error(op_span, "The " + op + " operator can not be used on expressions of types " +
                           type_name_in_messages(l) + ", " + type_name_in_messages(r));
      return;
    }
    // Arrays of one type compare element by element (bpftrace 0.17: == and != only); buffers
    // compare length and bytes.
    if (((l.kind == TypeKind::Array && l == r) ||
         (l.kind == TypeKind::Buffer && r.kind == TypeKind::Buffer)) &&
        (b.op == BinaryOp::Eq || b.op == BinaryOp::Ne))
      return;
    // bpftrace's head adds and compares count(), sum(), min(), max() and avg() maps as their
    // integers (0.17 refused them).
    auto number = [](const Type &t) { return t.is_integer_like() || t.is_castable_aggregate(); };
    if (!number(l) || !number(r)) {
      error(b.span, "Type mismatch for '" + op + "': comparing '" + type_name_in_messages(l) +
                        "' with '" + type_name_in_messages(r) + "'");
      return;
    }
    bool mixed = l.is_signed != r.is_signed && !is_nonnegative_literal(*b.lhs) &&
                 !is_nonnegative_literal(*b.rhs);
    std::string signs = ": '" + type_name_in_messages(l) + "' and '" + type_name_in_messages(r) +
                        "' can lead to undefined behavior";
    if (mixed && is_comparison(b.op))
      diags_.warning(op_span, "comparison of integers of different signs" + signs);
    else if (mixed && is_arithmetic(b.op))
      diags_.warning(op_span, "arithmetic on integers of different signs" + signs);
    if ((b.op == BinaryOp::Div || b.op == BinaryOp::Mod) &&
        ((l.is_signed && !is_nonnegative_literal(*b.lhs)) ||
         (r.is_signed && !is_nonnegative_literal(*b.rhs))))
      diags_.warning(op_span, "signed operands for '" + op +
                                  "' can lead to undefined behavior (cast to unsigned to silence "
                                  "warning)");
  }

  void unary(const UnaryExpr &u) {
    bool postfix = u.op == UnaryOp::PostInc || u.op == UnaryOp::PostDec;
    bool incdec = postfix || u.op == UnaryOp::PreInc || u.op == UnaryOp::PreDec;
    if (incdec && u.operand->kind == ExprKind::Map)
      map_keys(u.operand->as<MapExpr>(), u.operand->span); // ++ defines the map
    else
      expr(*u.operand, Use::Value);
    if (!final_)
      return;
    if (u.op == UnaryOp::AddressOf) // a device thread's variables have no address to read back
      return refuse_in_gpu_probes(u.span, "variable addresses (&$x)");
    const Type &t = u.operand->type;
    if (t.is_none() || t.is_integer_like())
      return;
    if (u.op == UnaryOp::Deref && (t.kind == TypeKind::Tuple || t.kind == TypeKind::Record)) {
      error(u.span, "Can not dereference struct/union of type '" + type_name_in_messages(t) +
                        "'. It is not a pointer.");
      return;
    }
    std::string op(op_text(u.op));
    error(postfix || incdec ? u.span : prefix(u.span, op.size()),
          "The " + op + " operator can not be used on expressions of type '" +
              type_name_in_messages(t) + "'");
  }

  // print(@m), clear(@m) and zero(@m) name a keyed map without its keys.
  static bool acts_on_whole_map(const stdlib::FunctionInfo &f, const MapExpr &m) {
    return m.keys.empty() && (f.id == stdlib::FunctionId::Print || f.id == stdlib::FunctionId::Len ||
                              f.id == stdlib::FunctionId::Clear || f.id == stdlib::FunctionId::Zero);
  }

  void call(const CallExpr &c, Use use) {
    const stdlib::FunctionInfo *f = c.id ? &stdlib::function_info(*c.id) : nullptr;
    bool misused_map = final_ && key_presence_error(c); // then its keys are not checked
    for (size_t i = 0; i < c.args.size(); ++i) {
      const Expr &a = *c.args[i];
      // bpftrace points from the call's start to the map's end: "print(@x", "delete(@x[1]".
      bool sizeof_type = f && f->id == stdlib::FunctionId::Sizeof && a.kind == ExprKind::Builtin;
      bool map_call = f && (f->kind == FunctionKind::Statement ||
                            stdlib::arg_rule(*f, 0) == ArgRule::Map);
      if (map_call && i == 0 && a.kind == ExprKind::Map)
        map_read(a.as<MapExpr>(), up_to(c.span, a.span),
                 misused_map || acts_on_whole_map(*f, a.as<MapExpr>()));
      else if (sizeof_type) {
        in_sizeof_ = true; // sizeof(typedef_name)
        expr(a, Use::Value);
        in_sizeof_ = false;
      } else
        expr(a, Use::Value);
    }
    if (!f)
      return;
    std::string name(f->name);
    if (!final_) {
      if (f->kind == FunctionKind::Aggregation && use != Use::MapValue) {
        error(c.span, name + "() should be directly assigned to a map");
        return;
      }
      if (f->kind == FunctionKind::Statement && use != Use::Statement) {
        error(c.span, name + "() should not be used in an assignment or as a map key");
        return;
      }
      if (std::string msg = stdlib::arity_error(*f, c.args.size()); !msg.empty()) {
        error(c.span, msg);
        return;
      }
      for (const auto &ap : probe_->attach_points) {
        uint8_t ctx = is_gpu(ap.provider) ? stdlib::kGpuContext : stdlib::kHostContext;
        if (!(f->contexts & ctx)) {
          error(c.span, name + "() is not available in " +
                            (is_gpu(ap.provider) ? "gpu" : "host") + " probes");
          return;
        }
      }
    }
    for (size_t i = 0; i < c.args.size(); ++i)
      if (!check_arg(c, *f, i))
        return;
    if (final_)
      errors_ += check_aggregation_args(c, diags_);
    bool formats = f->id == stdlib::FunctionId::Printf || f->id == stdlib::FunctionId::System ||
                   f->id == stdlib::FunctionId::Cat || f->id == stdlib::FunctionId::Errorf ||
                   f->id == stdlib::FunctionId::Warnf || f->id == stdlib::FunctionId::Debugf;
    if (final_ && formats)
      check_printf(c);
    if (final_ && f->id == stdlib::FunctionId::Debugf)
      check_debugf(c);
    if (final_ && f->id == stdlib::FunctionId::System && !options_.unsafe)
      error(c.span, "system() is an unsafe function being used in safe mode");
    if (final_)
      check_formatted_value(c, *f);
    if (final_ && f->id == stdlib::FunctionId::Reg && c.args[0]->kind == ExprKind::String &&
        !stdlib::pt_regs_offset(c.args[0]->as<StringExpr>().value))
      error(c.span, "'" + c.args[0]->as<StringExpr>().value +
                        "' is not a valid register on this architecture (x86_64)");
  }

  // buf, ntop, macaddr, kaddr, uaddr, ...: what their sources may be (bpftrace 0.17's words).
  void check_formatted_value(const CallExpr &c, const stdlib::FunctionInfo &f) {
    using stdlib::FunctionId;
    const std::string name(f.name);
    const Type &a0 = c.args.empty() ? Type() : c.args[0]->type;
    auto is_bytes = [](const Type &t) {
      return t.kind == TypeKind::Array || t.kind == TypeKind::String;
    };
    switch (f.id) {
    case FunctionId::Buf:
      if (!a0.is_integer_like() && !is_bytes(a0))
        error(c.span, "buf() expects an integer, array or string as first argument (" +
                          kind_name(a0) + " provided)");
      else if (c.args.size() == 1 && !is_bytes(a0))
        error(c.span, "buf() expects a length argument for non-array type " +
                          type_name_in_messages(a0));
      else if (c.args[0]->kind == ExprKind::String) // the literal is built whole, then copied
        check_built_size(c.args[0]->span, "buf() of a string literal", a0.size);
      break;
    case FunctionId::Ntop: {
      const Type &addr = c.args.back()->type;
      bool ok = addr.is_integer_like() ||
                (addr.kind == TypeKind::Array && (addr.size == 4 || addr.size == 16));
      if (!ok)
        error(c.span, "ntop() expects an integer or char[4] or char[16] argument, got " +
                          type_name_in_messages(addr));
      else if (c.args.size() == 2 && !a0.is_integer_like())
        error(c.span, "ntop() expects an integer address family as first argument");
      break;
    }
    case FunctionId::Pton: {
      const std::string *text = call_literal_text(c);
      uint8_t bytes[16];
      if (text && inet_pton(text->find(':') != std::string::npos ? AF_INET6 : AF_INET,
                            text->c_str(), bytes) != 1)
        error(c.span, "pton() expects a valid IPv4 or IPv6 address, got " + *text);
      break;
    }
    case FunctionId::Macaddr:
      if (!a0.is_integer_like() && !(is_bytes(a0) && a0.size >= 6))
        error(c.span, "macaddr() expects an array of at least 6 bytes or a pointer (" +
                          type_name_in_messages(a0) + " provided)");
      break;
    case FunctionId::PercpuKaddr:
      if (call_literal_text(c) && !info_.percpu_var_ids.count(&c))
        error(c.span, "Could not resolve per-CPU variable \"" + *call_literal_text(c) +
                          "\": percpu_kaddr() needs it in the kernel's BTF and in /proc/kallsyms "
                          "(a kernel built with CONFIG_KALLSYMS_ALL)");
      break;
    case FunctionId::Kaddr:
    case FunctionId::Uaddr: {
      const std::string *sym = call_literal_text(c);
      if (!sym)
        error(c.span, name + "() expects a string literal (" + kind_name(a0) + " provided)");
      else if (!info_.symbol_addresses.count(&c) && f.id == FunctionId::Kaddr)
        error(c.span, "Failed to resolve kernel symbol: " + *sym);
      else if (!info_.symbol_addresses.count(&c))
        error(c.span, "Could not resolve symbol: " +
                          (probe_->attach_points.empty() ? std::string()
                                                         : probe_->attach_points[0].target + ":") +
                          *sym);
      if (f.id == FunctionId::Uaddr)
        for (const auto &ap : probe_->attach_points)
          if (ap.provider != Provider::Uprobe && ap.provider != Provider::Uretprobe) {
            error(c.span, "uaddr() can only be used in uprobes and uretprobes");
            break;
          }
      break;
    }
    case FunctionId::Join: {
      const Type &p = a0;
      if (!p.is_integer_like())
        error(c.span, "join() expects a char *[] (the address of an array of strings), got " +
                          type_name_in_messages(p));
      break;
    }
    default:
      break;
    }
  }

  bool check_arg(const CallExpr &c, const stdlib::FunctionInfo &f, size_t i) {
    const Expr &a = *c.args[i];
    const std::string name(f.name);
    const std::string provided = " (" + kind_name(a.type) + " provided)";
    switch (stdlib::arg_rule(f, i)) {
    case ArgRule::Any:
      return true;
    case ArgRule::Integer:
      if (final_ && !a.type.is_integer_like()) {
        error(c.span, name + "() only supports integer arguments" + provided);
        return false;
      }
      return true;
    case ArgRule::IntegerLiteral:
      if (!final_ && !literal_value(a)) {
        error(c.span, name + "() expects a integer literal" + provided);
        return false;
      }
      return true;
    case ArgRule::Format:
    case ArgRule::StringLiteral:
      if (final_ == (stdlib::arg_rule(f, i) == ArgRule::StringLiteral) &&
          a.kind != ExprKind::String) {
        error(c.span, name + "() expects a string literal" + provided);
        return false;
      }
      return true;
    case ArgRule::Map:
      if (!final_ && a.kind != ExprKind::Map) {
        error(c.span, name + "() expects a map to be provided");
        return false;
      }
      return true;
    case ArgRule::String:
      if (final_ && !a.type.is_none() && a.type.kind != TypeKind::String) {
        error(c.span, name + "() expects a string argument" + provided);
        return false;
      }
      return true;
    case ArgRule::IntOrPointer:
      if (!final_ && !a.type.is_none() && !a.type.is_integer_like() && !is_tracepoint_string(a)) {
        error(c.span, name + "() expects an integer or a pointer type as first argument (" +
                          type_name_in_messages(a.type) + " provided)");
        return false;
      }
      return true;
    }
    return true;
  }

  // has_key() needs a keyed map; delete(@m) without a key a scalar one (bpftrace's words).
  bool key_presence_error(const CallExpr &c) {
    bool keyed_call = c.id == stdlib::FunctionId::HasKey || c.id == stdlib::FunctionId::Delete ||
                      c.id == stdlib::FunctionId::Len;
    if (!keyed_call || c.args.empty() || c.args[0]->kind != ExprKind::Map)
      return false;
    const MapExpr &m = c.args[0]->as<MapExpr>();
    const MapInfo *info = map_info(m.name);
    bool scalar = info && info->key.is_none();
    if (c.id == stdlib::FunctionId::Len && (scalar || !m.keys.empty()))
      error(c.span, "call to len() expects a map with explicit keys (non-scalar map)");
    else if (c.id == stdlib::FunctionId::HasKey && (scalar || m.keys.empty()))
      error(c.span, "call to has_key() expects a map with explicit keys (non-scalar map)");
    else if (c.id == stdlib::FunctionId::Delete && m.keys.empty() && info && !scalar)
      error(c.span, "call to delete() with a single argument expects a map without explicit "
                    "keys (scalar map)");
    else
      return false;
    return true;
  }

  // bpf_trace_printk takes three values at most (bpf-helpers(7)); bpftrace's words.
  void check_debugf(const CallExpr &c) {
    diags_.warning(c.span, "The debugf() builtin is not recommended for production use. For "
                           "more information see bpf_trace_printk in bpf-helpers(7).");
    if (c.args.size() > 4)
      error(c.span, "cannot use more than 3 conversion specifiers");
  }

  void check_printf(const CallExpr &c) {
    if (c.args.empty() || c.args[0]->kind != ExprKind::String)
      return;
    auto specs = parse_printf_format(c.args[0]->as<StringExpr>().value);
    size_t supplied = c.args.size() - 1;
    // system() and cat() say printf, as bpftrace 0.17's do; errorf() and warnf() their names.
    std::string who =
        c.name == "errorf" || c.name == "warnf" || c.name == "debugf" ? c.name : "printf";
    std::string counts = " (" + std::to_string(supplied) + " supplied, " +
                         std::to_string(specs.size()) + " expected)";
    if (supplied > specs.size()) {
      error(c.span, who + ": Too many arguments for format string" + counts);
      return;
    }
    if (supplied < specs.size()) {
      error(c.span, who + ": Not enough arguments for format string" + counts);
      return;
    }
    for (const auto &spec : specs)
      if (spec.width > kMaxPrintfWidth || spec.precision > kMaxPrintfWidth) {
        error(c.span, who + ": " + spec.text + ": field width and precision must be <= " +
                          std::to_string(kMaxPrintfWidth));
        return;
      }
    std::vector<Type> arg_types;
    for (size_t i = 1; i < c.args.size(); ++i)
      arg_types.push_back(c.args[i]->type);
    uint32_t record = 0;
    tuple_offsets(arg_types, &record);
    check_built_size(c.span, "printf arguments", record + 8); // after the event's 8-byte header
    for (size_t i = 0; i < specs.size(); ++i) {
      std::string got = printf_kind_name(c.args[i + 1]->type);
      std::string want = specs[i].arg == FormatArg::Integer  ? "integer"
                         : specs[i].arg == FormatArg::String ? "string"
                                                             : "buffer";
      // An enum (retval and args of GPU API calls) prints by name with %s, as a number with %d.
      bool enum_name = c.args[i + 1]->type.kind == TypeKind::Enum && want == "string";
      if (got != want && !enum_name) {
        error(c.span, who + ": " + specs[i].name +
                          " specifier expects a value of type " + want + " (" + got +
                          " supplied)");
        return;
      }
    }
  }

  const Program &program_;
  const SemanticInfo &info_;
  const SemanticOptions &options_;
  Diagnostics &diags_;
  bool final_ = false;
  int loops_ = 0; // loops around the statement being checked
  bool in_sizeof_ = false; // checking sizeof's argument: a typedef name is allowed there
  int errors_ = 0;
  const Probe *probe_ = nullptr;
  const std::map<std::string, Type> *probe_vars_ = nullptr;
  std::set<std::string> declared_;
  std::set<std::string> oversized_maps_; // maps whose key and value sizes were checked
  std::map<std::string, Type> var_types_; // first assigned type, for mismatch errors
};

} // namespace

std::string type_name_in_messages(const Type &t) {
  switch (t.kind) {
  case TypeKind::Integer:
    return (t.is_signed ? "int" : "unsigned int") + std::to_string(t.size * 8);
  case TypeKind::Tuple: {
    if (t.is_named_tuple())
      return to_string(t);
    std::string s = "(";
    for (size_t i = 0; i < t.elems.size(); ++i)
      s += (i ? "," : "") + type_name_in_messages(t.elems[i]);
    return s + ")";
  }
  default:
    return to_string(t);
  }
}

void check_types(const Program &program, const SemanticInfo &info, const SemanticOptions &options,
                 Diagnostics &diags) {
  Checker(program, info, options, diags).run();
}

} // namespace gpubt::frontend
