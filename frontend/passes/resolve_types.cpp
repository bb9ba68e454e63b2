// Type resolution, bpftrace 0.17 style: passes over the whole program until map and variable
// types stop changing, so a map read before its (textually later) assignment gets its type.
#include "frontend/passes/resolve_types.h"
#include "frontend/passes/constant_int.h"
#include "frontend/passes/tuple_index.h"

#include <algorithm>

#include "stdlib/builtins.h"
#include "stdlib/stack_builtins.h"
#include "stdlib/enums.h"
#include "stdlib/functions.h"

namespace gpubt::frontend {
namespace {


bool is_comparison(BinaryOp op) {
  switch (op) {
  case BinaryOp::Eq:
  case BinaryOp::Ne:
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    return true;
  default:
    return false;
  }
}

// Map values and keys hold integers as 64 bits (bpftrace casts them on store); a bool stays
// one, printed as true or false.
Type widen(const Type &t) {
  if (t.kind == TypeKind::Integer) {
    Type wide = Type::integer(8, t.is_signed);
    wide.is_bool = t.is_bool;
    return wide;
  }
  return t;
}

// A map key's type: every integer, in tuples too, held as 64 bits, so that keys written with
// other integer widths (`@a[1, ((int16)-5, 6)]`) are one key type.
Type widen_key(const Type &t) {
  if (t.kind != TypeKind::Tuple)
    return widen(t);
  Type wide = t;
  for (auto &e : wide.elems)
    e = widen_key(e);
  tuple_offsets(wide.elems, &wide.size);
  return wide;
}

// Folds a newly assigned type into a stored one: the first fixes it, later strings only
// grow it. Returns whether the slot changed.
bool merge_into(Type &slot, const Type &incoming, bool grow_integers = false) {
  if (incoming.is_none())
    return false;
  if (slot.is_none()) {
    slot = incoming;
    return true;
  }
  if (grow_integers && slot.kind == TypeKind::Integer && incoming.kind == TypeKind::Integer &&
      !slot.is_bool && !incoming.is_bool && incoming.size > slot.size) {
    slot = Type::integer(incoming.size, slot.is_signed && incoming.is_signed);
    return true;
  }
  if (slot.kind == TypeKind::String && incoming.kind == TypeKind::String &&
      incoming.size > slot.size) {
    slot.size = incoming.size;
    return true;
  }
  // A record keeps its first order: a later one in another order merges field by name.
  if (slot.kind == TypeKind::Tuple && incoming.kind == TypeKind::Tuple &&
      slot.elems.size() == incoming.elems.size()) {
    bool changed = false;
    Type merged = slot;
    for (size_t i = 0; i < merged.elems.size(); ++i) {
      int j = source_field(slot, incoming, i);
      if (j >= 0 && merged.elems[i].kind == incoming.elems[j].kind)
        changed |= merge_into(merged.elems[i], incoming.elems[j], grow_integers);
    }
    if (changed) {
      tuple_offsets(merged.elems, &merged.size);
      slot = std::move(merged);
    }
    return changed;
  }
  return false;
}

// A GPU API enum constant used by name (`retval == cudaSuccess`): its enum's type.
Type enum_constant_type(const std::string &name) {
  auto c = stdlib::find_enum_constant(name);
  if (!c)
    return Type::none();
  Type t = Type::integer(c->def->size, c->def->is_signed);
  t.kind = TypeKind::Enum;
  t.enum_name = std::string(c->def->name);
  return t;
}

} // namespace

bool is_whole_key(const MapExpr &m) {
  return m.keys.size() == 1 && m.keys[0]->type.kind == TypeKind::Tuple &&
         !m.keys[0]->type.is_named_tuple() && m.keys[0]->type.elems.size() > 1;
}

const std::string *call_literal_text(const CallExpr &c) {
  if (c.args.empty())
    return nullptr;
  const Expr *a = c.args[0].get();
  if (is_call(*a, FunctionId::Str) && !a->as<CallExpr>().args.empty())
    a = a->as<CallExpr>().args[0].get();
  return a->kind == ExprKind::String ? &a->as<StringExpr>().value : nullptr;
}

namespace {

class Resolver {
public:
  Resolver(Program &program, const SemanticOptions &options, SemanticInfo &info)
      : program_(program), options_(options), info_(info) {}

  // One pass over every probe; returns whether any map or variable type changed.
  bool run_pass() {
    changed_ = false;
    for (auto &probe : program_.probes) {
      probe_ = probe.get();
      vars_ = &info_.vars[probe_];
      if (probe->predicate)
        expr(*probe->predicate);
      if (probe->body)
        block(*probe->body);
    }
    return changed_;
  }

private:
  void block(BlockStmt &b) {
    for (auto &s : b.stmts)
      stmt(*s);
  }

  void stmt(Stmt &s) {
    switch (s.kind) {
    case StmtKind::Expr:
      expr(*s.as<ExprStmt>().expr);
      break;
    case StmtKind::MapAssign:
      map_assign(s.as<MapAssignStmt>());
      break;
    case StmtKind::VarAssign:
      var_assign(s.as<VarAssignStmt>());
      break;
    case StmtKind::While:
      if (s.as<WhileStmt>().each_map)
        each_var(s.as<WhileStmt>());
      else
        expr(*s.as<WhileStmt>().cond);
      block(*s.as<WhileStmt>().body);
      if (s.as<WhileStmt>().step)
        stmt(*s.as<WhileStmt>().step);
      break;
    case StmtKind::Jump:
      break;
    case StmtKind::If: {
      auto &i = s.as<IfStmt>();
      expr(*i.cond);
      block(*i.then_block);
      if (i.else_block)
        block(*i.else_block);
      break;
    }
    case StmtKind::Block:
      block(s.as<BlockStmt>());
      break;
    }
  }

  Type assigned_type(const Type &current, const std::optional<BinaryOp> &compound,
                     const Expr &value) {
    if (!compound)
      return value.type;
    Type cur = current.is_none() ? Type::integer() : current;
    return binary_type(*compound, cur, value.type);
  }

  void map_assign(MapAssignStmt &a) {
    expr(*a.value);
    keys(*a.map);
    MapInfo &m = define_map(*a.map);
    changed_ |= merge_into(m.value, widen(assigned_type(m.value, a.compound, *a.value)));
    a.map->type = m.value;
  }

  // for ($kv : @m): $kv is (key, value), the key a tuple itself for @m[a, b]. A count, sum,
  // min, max or avg value is its integer over all CPUs (bpftrace's castable aggregations).
  void each_var(WhileStmt &w) {
    auto m = info_.maps.find(w.each_map->name);
    Type t;
    if (m != info_.maps.end() && !m->second.key.is_none() && !m->second.value.is_none()) {
      const Type &v = m->second.value;
      t = Type::tuple({m->second.key, v.is_aggregate() ? Type::integer(8, v.is_signed) : v});
    }
    Type &slot = (*vars_)[w.each_var->key()];
    changed_ |= merge_into(slot, t);
    w.each_var->type = slot;
  }

  void var_assign(VarAssignStmt &a) {
    expr(*a.value);
    Type &slot = (*vars_)[a.var->key()];
    changed_ |= merge_into(slot, assigned_type(slot, a.compound, *a.value), options_.head_types);
    a.var->type = slot;
  }

  // The map's entry, created at its first definition (assignment, ++, --) in program order.
  MapInfo &define_map(MapExpr &m) {
    auto [it, inserted] = info_.maps.try_emplace(m.name);
    MapInfo &info = it->second;
    if (inserted) {
      info.name = m.name;
      info.first_use = m.span;
      changed_ = true;
    }
    // The first definition fixes how many keys the map takes; other arities are errors.
    bool whole = is_whole_key(m);
    if (m.keys.size() == 1 && m.keys[0]->type.is_none())
      return info; // a tuple or not: known in a later pass
    size_t n = whole ? m.keys[0]->type.elems.size() : m.keys.size();
    auto [arity, first] = key_arity_.try_emplace(m.name, n);
    if (!m.keys.empty() && arity->second == n)
      changed_ |= merge_into(info.key, key_type(m));
    return info;
  }

  static Type key_type(const MapExpr &m) {
    if (m.keys.size() == 1) // one key, or a tuple that is the whole key of a multi-key map
      return widen_key(m.keys[0]->type);
    std::vector<Type> elems;
    for (const auto &k : m.keys) {
      if (k->type.is_none())
        return Type::none();
      elems.push_back(widen_key(k->type));
    }
    return Type::tuple(std::move(elems));
  }

  void keys(MapExpr &m) {
    for (auto &k : m.keys)
      expr(*k);
  }

  static Type binary_type(BinaryOp op, const Type &l, const Type &r) {
    // Pointer arithmetic (p + n, n + p, p - n) keeps the pointer; codegen scales n.
    if (l.kind == TypeKind::Pointer && r.is_integer_like() && r.kind != TypeKind::Pointer &&
        (op == BinaryOp::Add || op == BinaryOp::Sub))
      return l;
    if (r.kind == TypeKind::Pointer && l.is_integer_like() && l.kind != TypeKind::Pointer &&
        op == BinaryOp::Add)
      return r;
    auto number = [](const Type &t) { return t.is_integer_like() || t.is_castable_aggregate(); };
    if (number(l) && number(r))
      return Type::integer(8, l.is_signed && r.is_signed);
    // bpftrace types string comparisons as unsigned int64.
    if (l.kind == TypeKind::String && r.kind == TypeKind::String && is_comparison(op))
      return Type::integer(8, false);
    if (l.kind == TypeKind::Array && r.kind == TypeKind::Array && is_comparison(op))
      return Type::integer(8, false);
    return Type::integer();
  }

  void expr(Expr &e) {
    switch (e.kind) {
    case ExprKind::Integer:
      e.type = literal_type(e.as<IntegerExpr>());
      break;
    case ExprKind::String:
      e.type = Type::string(e.as<StringExpr>().value.size() + 1);
      break;
    case ExprKind::Builtin: {
      auto &b = e.as<BuiltinExpr>();
      auto use = stdlib::find_builtin(b.name);
      if (use.info) {
        b.id = use.info->id;
        b.arg_index = use.arg_index;
      } else {
        b.constant = constant_value(b.name);
      }
      e.type = use.info ? stdlib::builtin_type(*use.info) : Type::none();
      if (use.info && b.stack && stdlib::is_stack_builtin(b.id.value())) {
        // Out of range: check_types says so; the type stays the default meanwhile.
        uint32_t most = stdlib::max_stack_frames(*b.id, b.stack->mode == "py");
        int64_t n = b.stack->frames.value_or(0);
        e.type = stdlib::stack_type(*b.id, b.stack->mode == "py",
                                    n >= 1 && n <= int64_t(most) ? uint32_t(n) : 0);
      }
      if (!use.info)
        e.type = enum_constant_type(b.name);
      if (!use.info && info_.c_types.constants.count(b.name))
        e.type = script_constant_type(b.name);
      else if (const Type *t = use.info ? nullptr : info_.c_types.find(b.name))
        e.type = *t; // a typedef name, as sizeof(name) takes it (check_types allows no other use)
      // curtask points at the kernel's task_struct (BTF's, or the script's own definition).
      if (use.info && use.info->id == stdlib::BuiltinId::Curtask)
        if (const Type *task = info_.c_types.find("struct task_struct"))
          e.type = Type::pointer(*task);
      if (use.info && use.info->id == stdlib::BuiltinId::Retval) {
        const AttachPoint *ap = uretprobe_point();
        if (auto t = ap && options_.retval_type ? options_.retval_type(*ap) : std::nullopt)
          e.type = *t;
      }
      break;
    }
    case ExprKind::Variable: {
      const std::string &name = e.as<VariableExpr>().name;
      if (name.size() > 1 && std::all_of(name.begin() + 1, name.end(), ::isdigit)) {
        e.type = Type::integer(); // positional parameter
        break;
      }
      auto it = vars_->find(e.as<VariableExpr>().key());
      e.type = it != vars_->end() ? it->second : Type::none();
      break;
    }
    case ExprKind::Map: {
      auto &m = e.as<MapExpr>();
      keys(m);
      auto it = info_.maps.find(m.name);
      e.type = it != info_.maps.end() ? it->second.value : Type::none();
      break;
    }
    case ExprKind::Call:
      call(e.as<CallExpr>());
      break;
    case ExprKind::Binary: {
      auto &b = e.as<BinaryExpr>();
      expr(*b.lhs);
      expr(*b.rhs);
      bool boolean = is_comparison(b.op) || b.op == BinaryOp::LogicalAnd ||
                     b.op == BinaryOp::LogicalOr;
      e.type = options_.head_types && boolean
                   ? Type::boolean()
                   : binary_type(b.op, b.lhs->type, b.rhs->type);
      break;
    }
    case ExprKind::Unary:
      unary(e.as<UnaryExpr>());
      break;
    case ExprKind::Ternary: {
      auto &t = e.as<TernaryExpr>();
      expr(*t.cond);
      expr(*t.then_expr);
      expr(*t.else_expr);
      const Type &then = t.then_expr->type.is_none() ? t.else_expr->type : t.then_expr->type;
      if (then.is_integer_like())
        e.type = Type::integer(8, then.is_signed);
      else if (then.kind == TypeKind::String)
        e.type = Type::string(options_.strlen); // BPFTRACE_STRLEN
      else
        e.type = then;
      break;
    }
    case ExprKind::Cast: {
      auto &c = e.as<CastExpr>();
      expr(*c.operand);
      if (c.to.of)
        expr(*c.to.of);
      e.type = spec_type(c.to, options_.c_types, c.operand->type.size);
      // only pointers to records, and arrays of integers: check_types says so
      if (e.type.kind == TypeKind::Record ||
          (e.type.kind == TypeKind::Array && !is_integer_array_cast(c.to, e.type)))
        e.type = Type::none();
      if (e.type.kind == TypeKind::Pointer) // (int8 *)&$x still points into the program
        e.type.to_program_memory = c.operand->type.to_program_memory;
      break;
    }
    case ExprKind::SizeofType: {
      auto &s = e.as<SizeofTypeExpr>();
      if (s.of.of)
        expr(*s.of.of);
      Type t = spec_type(s.of, options_.c_types);
      e.type = t.is_none() ? Type::none() : Type::integer(8, false);
      s.size = t.size;
      if (!s.fields.empty() && options_.c_types) // offsetof: check_types names a bad path
        s.size = options_.c_types->offset_of(t, s.fields).value_or(0);
      break;
    }
    case ExprKind::Index:
      index(e.as<IndexExpr>());
      break;
    case ExprKind::Field:
      field(e.as<FieldExpr>());
      break;
    case ExprKind::Tuple: {
      if (e.as<TupleExpr>().config && e.as<TupleExpr>().elems.empty())
        fill_config(e.as<TupleExpr>());
      std::vector<Type> elems;
      for (auto &el : e.as<TupleExpr>().elems) {
        expr(*el);
        elems.push_back(el->type);
      }
      const auto &names = e.as<TupleExpr>().names;
      e.type = names.empty() ? Type::tuple(std::move(elems))
                             : Type::named_tuple(std::move(elems), names);
      break;
    }
    case ExprKind::Block: {
      auto &b = e.as<BlockExpr>();
      block(*b.block);
      if (b.value)
        expr(*b.value);
      e.type = b.value ? b.value->type : Type::none();
      break;
    }
    }
  }

  // bpftrace head types a literal by its value: the smallest signed integer holding it.
  Type literal_type(const IntegerExpr &i) const {
    if (i.is_bool)
      return Type::boolean();
    if (i.is_unsigned || !options_.head_types)
      return Type::integer(8, !i.is_unsigned);
    for (uint32_t size : {1u, 2u, 4u})
      if (i.value >= -(int64_t(1) << (size * 8 - 1)) && i.value < (int64_t(1) << (size * 8 - 1)))
        return Type::integer(size, true);
    return Type::integer();
  }

  void unary(UnaryExpr &u) {
    if (is_step(u.op) && u.operand->kind == ExprKind::Map) {
      auto &m = u.operand->as<MapExpr>();
      keys(m);
      MapInfo &info = define_map(m);
      changed_ |= merge_into(info.value, Type::integer());
      m.type = info.value;
      u.type = info.value;
      return;
    }
    expr(*u.operand);
    if (is_step(u.op) && options_.head_types && u.operand->kind == ExprKind::Variable &&
        u.operand->type.kind == TypeKind::Integer && !u.operand->type.is_bool) {
      // bpftrace head: `$x++` makes $x a 64-bit integer (a literal's int8 would wrap at 127)
      Type &slot = (*vars_)[u.operand->as<VariableExpr>().key()];
      changed_ |= merge_into(slot, Type::integer(8, slot.is_signed), true);
      u.operand->type = slot;
    }
    if (is_step(u.op))
      u.type = u.operand->type;
    else if (u.op == UnaryOp::Deref) // *p: p's pointee; *n on an integer reads a uint64
      u.type = u.operand->type.kind == TypeKind::Pointer ? pointee(u.operand->type)
                                                         : Type::integer(8, false);
    else if (u.op == UnaryOp::AddressOf) {
      u.type = u.operand->type.is_none() ? Type::none() : Type::pointer(u.operand->type);
      u.type.to_program_memory = true;
    }
    else
      u.type = Type::integer(8, u.operand->type.is_none() || u.operand->type.is_signed);
  }

  // config(): a record literal of the options' values, as bpftrace head builds it.
  void fill_config(TupleExpr &t) const {
    for (const ConfigField &f : options_.config) {
      ExprPtr value;
      if (f.kind == ConfigField::Kind::String) {
        auto s = std::make_unique<StringExpr>();
        s->value = f.text;
        value = std::move(s);
      } else {
        auto n = std::make_unique<IntegerExpr>();
        n->value = int64_t(f.number);
        n->is_bool = f.kind == ConfigField::Kind::Bool;
        n->is_unsigned = f.kind == ConfigField::Kind::Int;
        value = std::move(n);
      }
      value->span = t.span;
      t.elems.push_back(std::move(value));
      t.names.push_back(f.name);
    }
  }

  // tseries(v, interval, n[, agg]): the checker says what is wrong with the arguments.
  static void set_tseries_params(CallExpr &c) {
    auto arg = [&](size_t i) { return i < c.args.size() ? constant_int(*c.args[i]) : std::nullopt; };
    c.type.tseries_interval_ns = arg(1).value_or(0);
    c.type.tseries_intervals = arg(2).value_or(0);
    if (c.args.size() < 4 || c.args[3]->kind != ExprKind::String)
      return;
    const std::string &agg = c.args[3]->as<StringExpr>().value;
    for (auto [name, a] : {std::pair{"avg", TseriesAgg::Avg}, std::pair{"max", TseriesAgg::Max},
                           std::pair{"min", TseriesAgg::Min}, std::pair{"sum", TseriesAgg::Sum}})
      if (agg == name)
        c.type.tseries_agg = a;
  }

  void call(CallExpr &c) {
    for (auto &a : c.args)
      expr(*a);
    const stdlib::FunctionInfo *f = stdlib::find_function(c.name);
    if (!f) {
      c.type = Type::none();
      return;
    }
    c.id = f->id;
    switch (f->kind) {
    case stdlib::FunctionKind::Aggregation: {
      bool is_signed = !c.args.empty() && c.args[0]->type.is_signed;
      c.type = Type::aggregate(f->result, is_signed);
      if (f->id == stdlib::FunctionId::Lhist && c.args.size() == 4) {
        auto lit = [&](size_t i) {
          const Expr &a = *c.args[i];
          return a.kind == ExprKind::Integer ? a.as<IntegerExpr>().value : 0;
        };
        c.type.lhist_min = lit(1);
        c.type.lhist_max = lit(2);
        c.type.lhist_step = lit(3);
      }
      if (f->id == stdlib::FunctionId::Tseries)
        set_tseries_params(c);
      break;
    }
    case stdlib::FunctionKind::Statement:
      c.type = Type::none();
      break;
    case stdlib::FunctionKind::Value:
      if (f->result == TypeKind::String) {
        c.type = Type::string(f->id == stdlib::FunctionId::Str ? options_.strlen : f->result_size);
      } else if (f->result == TypeKind::KernelName) {
        c.type = Type::integer(8, false);
        c.type.kind = TypeKind::KernelName;
      } else if (f->result == TypeKind::Timestamp) {
        c.type = Type::integer(8, false);
        c.type.kind = TypeKind::Timestamp;
        if (!c.args.empty() && c.args[0]->kind == ExprKind::String)
          c.type.enum_name = c.args[0]->as<StringExpr>().value;
      } else if (auto t = formatted_value_type(c, *f)) {
        c.type = *t;
      } else if ((f->id == stdlib::FunctionId::Uptr || f->id == stdlib::FunctionId::Kptr) &&
                 !c.args.empty()) {
        c.type = c.args[0]->type.is_none() ? Type::integer() : c.args[0]->type;
      } else if (f->id == stdlib::FunctionId::Delete || f->id == stdlib::FunctionId::HasKey) {
        c.type = Type::boolean();
      } else if (f->id == stdlib::FunctionId::Bswap && !c.args.empty()) {
        c.type = Type::integer(c.args[0]->type.size ? c.args[0]->type.size : 8, false);
      } else {
        c.type = Type::integer();
      }
      break;
    }
  }

  // The functions whose values print in a form of their own (buf, ntop, strerror, ...), and the
  // symbol lookups of kaddr() and uaddr(); nullopt for the others.
  std::optional<Type> formatted_value_type(CallExpr &c, const stdlib::FunctionInfo &f) {
    using stdlib::FunctionId;
    auto with_kind = [](TypeKind kind, uint32_t size) {
      Type t = Type::integer(size, false);
      t.kind = kind;
      return t;
    };
    switch (f.id) {
    case FunctionId::Buf:
      return with_kind(TypeKind::Buffer, buffer_length(c) + 1);
    case FunctionId::Ntop:
      return with_kind(TypeKind::Inet, 24);
    case FunctionId::Macaddr:
      return with_kind(TypeKind::MacAddr, 6);
    case FunctionId::Strerror:
      return with_kind(TypeKind::Errno, 8);
    case FunctionId::SignalName:
      return with_kind(TypeKind::SignalName, 8);
    case FunctionId::CgroupPath:
      return with_kind(TypeKind::CgroupPath, 8);
    case FunctionId::Usym:
      return with_kind(TypeKind::UserSym, 8);
    case FunctionId::Pton: {
      const std::string *text = call_literal_text(c);
      bool v6 = text && text->find(':') != std::string::npos;
      return Type::array(Type::integer(1, false), v6 ? 16 : 4);
    }
    case FunctionId::Kaddr:
      if (const std::string *name = call_literal_text(c); name && options_.kernel_symbol &&
                                                      !info_.symbol_addresses.count(&c))
        if (auto s = options_.kernel_symbol(*name))
          info_.symbol_addresses[&c] = s->address;
      return Type::integer(8, false);
    case FunctionId::PercpuKaddr:
      if (const std::string *name = call_literal_text(c); name && options_.percpu_var &&
                                                      !info_.percpu_var_ids.count(&c))
        if (auto id = options_.percpu_var(*name))
          info_.percpu_var_ids[&c] = *id;
      return Type::pointer(Type::integer(8, false)); // bpftrace's `uint64 *`
    case FunctionId::Uaddr: {
      uint64_t size = 8;
      const AttachPoint *ap = probe_->attach_points.empty() ? nullptr : &probe_->attach_points[0];
      if (const std::string *name = call_literal_text(c); name && ap && options_.user_symbol)
        if (auto s = options_.user_symbol(ap->target, *name)) {
          info_.symbol_addresses[&c] = s->address;
          size = s->size;
        }
      // bpftrace's pointee: an unsigned integer of the symbol's size, else uint64.
      if (size != 1 && size != 2 && size != 4)
        size = 8;
      return Type::pointer(Type::integer(uint32_t(size), false));
    }
    default:
      return std::nullopt;
    }
  }

  // buf(src, len): len bytes (at most BPFTRACE_STRLEN if len is not a literal); buf(array):
  // the array's bytes.
  uint32_t buffer_length(const CallExpr &c) const {
    constexpr int64_t kMaxBuffer = 1023;
    if (c.args.size() > 1) {
      const Expr &len = *c.args[1];
      if (len.kind != ExprKind::Integer)
        return options_.strlen;
      return uint32_t(std::clamp<int64_t>(len.as<IntegerExpr>().value, 0, kMaxBuffer));
    }
    const Type &src = c.args.empty() ? Type() : c.args[0]->type;
    if (src.kind == TypeKind::Array || src.kind == TypeKind::String)
      return std::min<uint32_t>(src.size, kMaxBuffer);
    return 0;
  }

  Type pointee(const Type &p) const {
    return options_.c_types ? options_.c_types->complete(p.elems[0]) : p.elems[0];
  }

  // a[i] on an array: its element; p[i] on a pointer: *(p + i); n[i] on an integer: a uint64.
  void index(IndexExpr &x) {
    expr(*x.base);
    expr(*x.index);
    const Type &base = x.base->type;
    x.tuple_elem.reset();
    if (base.kind == TypeKind::Tuple && !base.is_named_tuple()) { // (1, "a")[1 - 1]
      auto i = constant_int(*x.index);
      if (i && *i >= 0 && uint64_t(*i) < base.elems.size())
        x.tuple_elem = size_t(*i);
      x.type = x.tuple_elem ? base.elems[*x.tuple_elem] : Type::none();
      return;
    }
    if (base.kind == TypeKind::Array)
      x.type = base.elems[0];
    else if (base.kind == TypeKind::Pointer)
      x.type = pointee(base);
    else if (base.is_integer_like())
      x.type = Type::integer(8, false);
    else
      x.type = Type::none();
  }

  void field(FieldExpr &f) {
    expr(*f.base);
    f.type = Type::none();
    const Type &base = f.base->type;
    // s.x on a record, p->x and (bpftrace head) p.x on a pointer to one.
    if (base.kind == TypeKind::Record || base.kind == TypeKind::Pointer) {
      Type rec = base.kind == TypeKind::Pointer ? pointee(base) : base;
      int i = rec.kind == TypeKind::Record && (!f.arrow || base.kind == TypeKind::Pointer)
                  ? field_index(rec, f.field)
                  : -1;
      if (i >= 0)
        f.type = options_.c_types ? options_.c_types->complete(rec.elems[i]) : rec.elems[i];
      return;
    }
    if (base.is_named_tuple()) {
      if (int i = field_index(base, f.field); i >= 0)
        f.type = base.elems[i];
      return;
    }
    if (base.kind == TypeKind::Tuple && !f.field.empty() &&
        std::all_of(f.field.begin(), f.field.end(), ::isdigit)) {
      size_t i = tuple_index(f.field);
      if (i < base.elems.size())
        f.type = base.elems[i];
      return;
    }
    if (is_builtin(*f.base, BuiltinId::Args) && options_.field_type && !probe_->attach_points.empty()) {
      if (auto t = options_.field_type(probe_->attach_points[0], f.field))
        f.type = *t;
    }
  }

  // A constant of the script's C definitions: an int64, of its enum's type if a named enum
  // defines it (8 bytes still, as sizeof(BTF_VAR_STATIC) is in bpftrace).
  Type script_constant_type(const std::string &name) const {
    Type t = Type::integer();
    if (auto it = info_.c_types.constant_enums.find(name); it != info_.c_types.constant_enums.end()) {
      t.kind = TypeKind::Enum;
      t.enum_name = it->second;
    }
    return t;
  }

  // A GPU API enum constant's value, else one of the script's C definitions'.
  std::optional<int64_t> constant_value(const std::string &name) const {
    if (auto c = stdlib::find_enum_constant(name))
      return c->value;
    if (auto it = info_.c_types.constants.find(name); it != info_.c_types.constants.end())
      return it->second;
    return std::nullopt;
  }

  // The probe's first attach point when it is a uretprobe (retval is typed by it).
  const AttachPoint *uretprobe_point() const {
    if (probe_->attach_points.empty() || probe_->attach_points[0].provider != Provider::Uretprobe)
      return nullptr;
    return &probe_->attach_points[0];
  }

  Program &program_;
  const SemanticOptions &options_;
  SemanticInfo &info_;
  Probe *probe_ = nullptr;
  std::map<std::string, Type> *vars_ = nullptr;
  std::map<std::string, size_t> key_arity_;
  bool changed_ = false;
};

} // namespace

Type named_type(const std::string &type_name, int pointer_depth, const CTypes *c_types) {
  Type t = cast_type(type_name);
  if (t.is_none())
    if (const Type *c = c_types ? c_types->find(type_name) : prelude_type(type_name))
      t = *c;
  for (int i = 0; i < pointer_depth && !t.is_none(); ++i)
    t = Type::pointer(t);
  return t;
}

Type spec_element_type(const TypeSpec &spec, const CTypes *c_types) {
  Type t = spec.of ? spec.of->type : named_type(spec.name, 0, c_types);
  for (int i = 0; i < spec.pointer_depth && !t.is_none(); ++i)
    t = Type::pointer(t);
  return t;
}

Type spec_type(const TypeSpec &spec, const CTypes *c_types, uint32_t operand_size) {
  Type t = spec_element_type(spec, c_types);
  if (!spec.array_count || t.is_none())
    return t;
  uint32_t n = *spec.array_count;
  if (n == 0 && t.size && operand_size % t.size == 0) // `[]`: as many as the operand fills
    n = operand_size / t.size;
  return n ? Type::array(std::move(t), n) : Type::none();
}

bool is_integer_array_cast(const TypeSpec &spec, const Type &t) {
  return spec.array_count && t.kind == TypeKind::Array && t.elems[0].kind == TypeKind::Integer;
}

Type cast_type(std::string_view name) {
  static const struct {
    std::string_view name;
    uint32_t size;
    bool is_signed;
  } kCasts[] = {{"int8", 1, true},   {"int16", 2, true},   {"int32", 4, true},
                {"int64", 8, true},  {"uint8", 1, false},  {"uint16", 2, false},
                {"uint32", 4, false}, {"uint64", 8, false}};
  for (const auto &c : kCasts)
    if (c.name == name)
      return Type::integer(c.size, c.is_signed);
  if (name == "bool")
    return Type::boolean();
  return Type::none();
}

SemanticInfo resolve_types(Program &program, const SemanticOptions &options) {
  SemanticInfo info;
  if (options.c_types)
    info.c_types = *options.c_types;
  Resolver r(program, options, info);
  // Each pass can only fix or grow types, so this settles; the bound guards against a bug.
  for (int pass = 0; pass < 8 && r.run_pass(); ++pass) {
  }
  for (const auto &d : program.map_decls)
    if (auto it = info.maps.find(d.name); it != info.maps.end()) {
      it->second.decl_kind = d.kind;
      it->second.decl_max_entries = d.max_entries;
    }
  return info;
}

} // namespace gpubt::frontend
