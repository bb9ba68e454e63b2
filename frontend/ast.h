// The gpubt AST: probes, statements and expressions, each with the span it came from.
// Passes fill in Expr::type, and resolve_types what a builtin's or a call's name names (an id
// of stdlib's tables); after the checks, place_launch_probes moves launch-level probes to the
// host and launch_call_uprobe rewrites launch_call on the GPU into a map read (adding a hidden
// probe); nothing else in the tree changes after parsing.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/builtin_ids.h"
#include "frontend/source.h"
#include "frontend/types.h"

namespace gpubt::frontend {

struct Node {
  SourceSpan span;
};

enum class ExprKind {
  Integer,  // 42, 0x10, 1e3 is not allowed (as bpftrace)
  String,   // "text"
  Builtin,  // pid, tid, comm, arg0, retval, args, ...
  Variable, // $x
  Map,      // @x, @x[k], @x[k1, k2], @[k]
  Call,     // count(), printf("..", ...)
  Binary,   // a + b
  Unary,    // -a, !a, ~a, ++$x, $x--
  Ternary,  // c ? a : b
  Cast,     // (uint32)x
  Field,    // args.size, $s.x, $p->x
  Tuple,    // (a, b)
  Index,    // $a[i] on an array value; on a pointer it reads *(p + i)
  SizeofType, // sizeof(struct Foo): the C type's size, known once clang has read the definitions
  Block,      // { stmts; value }: a block expression, and what a macro call expands to
};

struct Expr : Node {
  explicit Expr(ExprKind k) : kind(k) {}
  virtual ~Expr() = default;
  const ExprKind kind;
  Type type; // set by resolve_types
  template <class T> T &as() { return static_cast<T &>(*this); }
  template <class T> const T &as() const { return static_cast<const T &>(*this); }
};
using ExprPtr = std::unique_ptr<Expr>;

// A type as a cast, sizeof or `let $x: T` writes it: NAME ("uint32", "struct Foo", a typedef
// name) or typeof(OF), the type of the expression OF (never evaluated); then POINTER_DEPTH `*`s,
// then `[N]` (bpftrace head's arrays; 0 for `[]`: as many elements as a cast's operand fills).
struct TypeSpec {
  std::string name;
  ExprPtr of;
  int pointer_depth = 0;
  std::optional<uint32_t> array_count;
};

struct IntegerExpr : Expr {
  IntegerExpr() : Expr(ExprKind::Integer) {}
  int64_t value = 0;
  bool is_bool = false; // `true` or `false`
  // Written above INT64_MAX: a uint64 (bpftrace head; VALUE holds its bits).
  bool is_unsigned = false;
};
struct StringExpr : Expr {
  StringExpr() : Expr(ExprKind::String) {}
  std::string value; // escapes already decoded
};
struct BuiltinExpr : Expr {
  BuiltinExpr() : Expr(ExprKind::Builtin) {}
  std::string name;
  // Set by resolve_types. A builtin: its id, and N of argN / sargN. Otherwise an identifier the
  // table lacks: an enum constant (cudaSuccess) or the script's #define has its value.
  std::optional<BuiltinId> id;
  int arg_index = -1;
  std::optional<int64_t> constant;
  // A stack builtin called with arguments, bpftrace's spelling: ustack(py), ustack(py, 8),
  // ustack(8), kstack(8), pystack(8). The parser keeps them as written (a mode name, a frame
  // count literal); check_types says what is wrong with them, resolve_types sizes the type.
  struct StackArgs {
    std::optional<std::string> mode;
    SourceSpan mode_span;
    std::optional<int64_t> frames;
    SourceSpan frames_span;
  };
  std::optional<StackArgs> stack;
};
struct VariableExpr : Expr {
  VariableExpr() : Expr(ExprKind::Variable) {}
  std::string name; // with the '$'
  // Set by scope_variables: which `let` or loop declaration the name means (0: the probe-wide
  // variable of bpftrace 0.17, which every undeclared assignment makes).
  int decl = 0;
  // The variable's identity for the passes and codegen: NAME, or NAME#DECL.
  std::string key() const { return decl ? name + "#" + std::to_string(decl) : name; }
};
struct MapExpr : Expr {
  MapExpr() : Expr(ExprKind::Map) {}
  std::string name;          // with the '@'; "@" for the anonymous map
  std::vector<ExprPtr> keys; // empty: scalar map; several: a tuple key
};
struct CallExpr : Expr {
  CallExpr() : Expr(ExprKind::Call) {}
  std::string name;
  std::vector<ExprPtr> args;
  std::optional<FunctionId> id; // set by resolve_types; none for an unknown function
  // Made by expanding macros: their calls, innermost first (errorf's "expanded from" notes).
  std::vector<SourceSpan> expanded_from;
};
enum class BinaryOp {
  Add, Sub, Mul, Div, Mod, BitAnd, BitOr, BitXor, Shl, Shr,
  Eq, Ne, Lt, Le, Gt, Ge, LogicalAnd, LogicalOr,
};
struct BinaryExpr : Expr {
  BinaryExpr() : Expr(ExprKind::Binary) {}
  BinaryOp op = BinaryOp::Add;
  ExprPtr lhs, rhs;
};
// AddressOf: `&$x` (bpftrace 0.22), the address of a variable's slot on the BPF stack.
enum class UnaryOp { Neg, Not, BitNot, Deref, PreInc, PreDec, PostInc, PostDec, AddressOf };
// ++x, --x, x++, x--: the forms that write their operand.
inline bool is_step(UnaryOp op) {
  return op == UnaryOp::PreInc || op == UnaryOp::PreDec || op == UnaryOp::PostInc ||
         op == UnaryOp::PostDec;
}
struct UnaryExpr : Expr {
  UnaryExpr() : Expr(ExprKind::Unary) {}
  UnaryOp op = UnaryOp::Neg;
  ExprPtr operand; // a Map or Variable for the ++/-- forms
};
struct TernaryExpr : Expr {
  TernaryExpr() : Expr(ExprKind::Ternary) {}
  ExprPtr cond, then_expr, else_expr;
};
struct CastExpr : Expr {
  CastExpr() : Expr(ExprKind::Cast) {}
  TypeSpec to; // (uint32), (int8 *), (struct Foo *), (int8[8]), (typeof($x))
  ExprPtr operand;
};
struct FieldExpr : Expr {
  FieldExpr() : Expr(ExprKind::Field) {}
  ExprPtr base; // `args` builtin, a tuple for .0/.1, a record, a pointer to one (arrow)
  std::string field;
  bool arrow = false; // written `->`
  SourceSpan field_span;
};
struct IndexExpr : Expr {
  IndexExpr() : Expr(ExprKind::Index) {}
  ExprPtr base, index;
  // A tuple's `[i]`: the element i, when resolve_types could fold the index to it.
  std::optional<size_t> tuple_elem;
};
struct SizeofTypeExpr : Expr {
  SizeofTypeExpr() : Expr(ExprKind::SizeofType) {}
  TypeSpec of; // "struct Foo", a typedef name, typeof(...)
  // offsetof(struct Foo, bar.x) (bpftrace 0.22): the field path; SIZE is then its offset.
  std::vector<std::string> fields;
  uint64_t size = 0; // set by resolve_types
};
// `(1, "x")`, or a record `(a = 1, b = "x")`: a tuple whose fields have names.
struct TupleExpr : Expr {
  TupleExpr() : Expr(ExprKind::Tuple) {}
  std::vector<ExprPtr> elems;
  std::vector<std::string> names; // a record's field names, in source order; empty for a tuple
  // config() or __builtin_config (bpftrace head): the configuration's record, which
  // resolve_types fills from SemanticOptions::config.
  bool config = false;
};

enum class StmtKind { Expr, MapAssign, VarAssign, If, Block, While, Jump };

struct Stmt : Node {
  explicit Stmt(StmtKind k) : kind(k) {}
  virtual ~Stmt() = default;
  const StmtKind kind;
  template <class T> T &as() { return static_cast<T &>(*this); }
  template <class T> const T &as() const { return static_cast<const T &>(*this); }
};
using StmtPtr = std::unique_ptr<Stmt>;

// Compound assignment keeps its operator; "=" is std::nullopt.
struct ExprStmt : Stmt {
  ExprStmt() : Stmt(StmtKind::Expr) {}
  ExprPtr expr;
};
struct MapAssignStmt : Stmt {
  MapAssignStmt() : Stmt(StmtKind::MapAssign) {}
  std::unique_ptr<MapExpr> map;
  std::optional<BinaryOp> compound;
  ExprPtr value;
};
struct VarAssignStmt : Stmt {
  VarAssignStmt() : Stmt(StmtKind::VarAssign) {}
  std::unique_ptr<VariableExpr> var;
  std::optional<BinaryOp> compound;
  ExprPtr value;
  // `let $x = v` (`let $x;` has the value 0), or a for loop's variable (and its hidden end)
  enum class Decl { None, Let, Loop } declaration = Decl::None;
};
struct BlockStmt : Stmt {
  BlockStmt() : Stmt(StmtKind::Block) {}
  std::vector<StmtPtr> stmts;
};
struct IfStmt : Stmt {
  IfStmt() : Stmt(StmtKind::If) {}
  ExprPtr cond;
  std::unique_ptr<BlockStmt> then_block;
  std::unique_ptr<BlockStmt> else_block; // null if absent; `else if` is an IfStmt inside it
};

// while (cond) { ... }: the verifier bounds it (bpftrace's loops, kernel >= 5.3).
// `for ($i : a..b) { ... }` is built as { let $i = a; let $end = b; while ($i < $end) { ... }
// step: $i = $i + 1 }: STEP runs after the body and on `continue`.
struct WhileStmt : Stmt {
  WhileStmt() : Stmt(StmtKind::While) {}
  ExprPtr cond;
  std::unique_ptr<BlockStmt> body;
  StmtPtr step;        // null for a while loop
  bool is_for = false; // written as a for loop
  // for ($i : a..b): COND is `$i < $i.end`, STEP `$i += 1` (ast_builder); host probes run it
  // with bpf_loop, whose count the verifier need not know (`0..@m[k]`).
  bool is_range = false;
  // for ($kv : @map) { ... }: COND is null; the body runs once per element of EACH_MAP (no
  // keys), with EACH_VAR (a loop variable) = (key, value); host probes run it in a callback of
  // bpf_for_each_map_elem.
  std::unique_ptr<MapExpr> each_map;
  std::unique_ptr<VariableExpr> each_var;
};

// `{ $x = 1; $x + 1 }`: the statements run in their own scope, then VALUE is the block's value
// (none: a block without one, as a macro whose last statement ends in `;`; its type is none).
struct BlockExpr : Expr {
  BlockExpr() : Expr(ExprKind::Block) {}
  std::unique_ptr<BlockStmt> block;
  ExprPtr value;
};

enum class Jump { Break, Continue, Return };
struct JumpStmt : Stmt {
  JumpStmt() : Stmt(StmtKind::Jump) {}
  Jump jump = Jump::Break;
};

enum class Provider {
  Begin, End, Interval, Uprobe, Uretprobe, Tracepoint, // host
  GpuKprobe, GpuKretprobe,                              // gpu
  GpuBlockBegin, GpuBlockEnd, // gpu: once per block, by its first thread in / last thread out
  // gpu: each memory access, gpu:{mem,load,store,atomic}[:SPACE]:KERNEL (target = the access
  // word, ns = SPACE: global, shared, local; empty: every space), and each block-wide barrier
  GpuMemory, GpuBarrier,
  // host: gpu:hang:KERNEL[:DURATION], run by gpubt when a CUDA launch of KERNEL has run
  // DURATION (interval_ns; target = DURATION as written, empty: the default 2s)
  GpuHang,
  Kprobe, Kretprobe, // host, kernel functions: compiled and loaded; attach where the kernel can
  Profile,           // host: every CPU at a rate (profile:hz:99), target = unit, func = count
  Usdt, // host: usdt:FILE:[PROVIDER:]NAME; target = FILE (empty: -p's files), ns = PROVIDER
  Software, Hardware, // host: perf events, software:EVENT:COUNT; target = EVENT, func = COUNT
  // host: hardware breakpoints, watchpoint:ADDRESS:LEN:MODE or watchpoint:FUNC+argN:LEN:MODE
  // (func = FUNC of the -c/-p program, watch.arg = N); async: the process is not stopped while
  // a function's watchpoint is set up
  Watchpoint, AsyncWatchpoint,
  // host: a gpu:kretprobe:KERNEL /last_thread/ probe that reads only launch-level values, run by
  // gpubt once per finished CUDA launch of KERNEL (place_launch_probes.h); never parsed, printed
  // as the gpu:kretprobe it was written as
  GpuLaunch,
};
bool is_gpu(Provider p);
bool is_gpu_block(Provider p); // gpu:block_begin, gpu:block_end

// Whether E is the builtin ID, or a call of the function ID (after resolve_types).
bool is_builtin(const Expr &e, BuiltinId id);
bool is_call(const Expr &e, FunctionId id);
bool is_watchpoint(Provider p);

struct AttachPoint : Node {
  std::string raw;       // as written, e.g. "host:uprobe:./app:cuda*"
  Provider provider = Provider::Begin;
  bool host_prefix = false; // written with "host:"
  std::string target;    // uprobe: binary/library path or alias; tracepoint: category
  std::string func;      // uprobe: function pattern; tracepoint: event; gpu: kernel pattern
  std::string ns;        // usdt: the provider (empty: any); gpu memory probes: the space
  struct Watch {
    uint64_t address = 0; // the absolute form's
    int arg = -1;         // the function form's argN
    uint32_t length = 0;  // 1, 2, 4 or 8
    std::string mode;     // of r, w, x
  } watch;
  uint64_t interval_ns = 0; // interval:s:N / interval:ms:N; software/hardware: COUNT (0: none);
                            // gpu:hang: the DURATION
  // The canonical name bpftrace prints for `probe`: "uprobe:./app:foo", "interval:s:1".
  std::string name() const;
};

enum class BlockDelimiter { Braces, Angles }; // { } or < >

struct Probe : Node {
  std::vector<AttachPoint> attach_points;
  ExprPtr predicate; // null if none
  std::unique_ptr<BlockStmt> body;
  BlockDelimiter delimiter = BlockDelimiter::Braces;
  // Added by a pass, not written in the script (launch_call_uprobe.h): attached best effort,
  // never counted or reported as the script's (abi::ProbeSpec::hidden).
  bool hidden = false;
};

// A C definition before the probes (`struct Foo { int x; }`, `#include <...>`, `#define`),
// as written; clang reads them (frontend/clang).
struct CDefinition : Node {
  std::string text;
};

// config = { NAME = VALUE; ... }: bpftrace's configuration options, set in the script.
struct ConfigItem : Node {
  std::string name, value;
};

// let @m = hash(100);  KIND: hash, lruhash, percpuhash, percpulruhash, percpuarray.
struct MapDecl : Node {
  std::string name, kind;
  uint64_t max_entries = 0;
};

struct Program : Node {
  std::vector<CDefinition> c_definitions;
  std::vector<std::string> imported_headers; // `import "x.h";`: canonical paths, for clang
  std::vector<ConfigItem> config;
  std::vector<MapDecl> map_decls;
  std::vector<std::unique_ptr<Probe>> probes;
};

} // namespace gpubt::frontend
