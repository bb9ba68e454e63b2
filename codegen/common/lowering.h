// The lowering core: expressions, statements and control flow -> LLVM IR, written once for every
// back end, as Halide's CodeGen_LLVM is. A back end (codegen/bpf's LowerCtx, codegen/device's
// DevCtx) derives from Lowering and implements its hooks: where values live, maps, builtins and
// calls, and the operators it has no lowering for.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "frontend/ast.h"
#include "frontend/passes/semantic_info.h"

namespace gpubt::codegen {

// An integer-like value is an i64 (already truncated and re-extended to its type's width);
// strings and tuples are a pointer to type.size bytes with the given alignment.
struct Value {
  llvm::Value *v = nullptr;
  uint32_t align = 8;
};

// Bytes one step of pointer arithmetic moves: the pointee's size (1 for a non-pointer).
uint32_t pointer_step(const frontend::Type &t);

// The largest power of two up to ALIGN that OFFSET is a multiple of.
inline uint32_t align_at(uint32_t align, uint64_t offset) {
  uint32_t a = align;
  while (a > 1 && offset % a)
    a /= 2;
  return a;
}

class Lowering {
public:
  explicit Lowering(llvm::Module &m) : mod(m), ctx(m.getContext()), b(m.getContext()) {}
  virtual ~Lowering() = default;

  Value lower_expr(const frontend::Expr &e);
  void lower_stmt(const frontend::Stmt &s);
  void lower_block(const frontend::BlockStmt &block);
  // The probe's predicate, then its body; where the predicate is false, a branch to SKIP.
  void lower_probe_body(llvm::BasicBlock *skip);
  llvm::Value *truthy(Value v); // i1

  struct Var {
    frontend::Type type;
    llvm::Value *ptr = nullptr; // variable_slot()
  };
  // $NAME, typed by the semantic pass (TYPE where it has no type for it).
  Var &variable(const std::string &name, const frontend::Type &type);
  void assign_variable(const std::string &name, Value v, const frontend::Type &type);

  llvm::Value *byte_ptr(llvm::Value *base, uint64_t offset);
  void set_error(std::string msg); // the first one stays

  llvm::Module &mod;
  llvm::LLVMContext &ctx;
  llvm::IRBuilder<> b;
  llvm::Function *fn = nullptr;
  const frontend::SemanticInfo *sema = nullptr;
  const frontend::Probe *probe = nullptr; // null in a probe codegen adds
  std::map<std::string, Var> vars;
  std::string error;         // first error met; lowering goes on but the result is discarded
  frontend::SourceSpan span; // the expression being lowered

protected:
  // Where values live: memory types are pointers to their bytes, the rest i64s.
  virtual bool holds_in_memory(const frontend::Type &t) const = 0;
  virtual llvm::Value *temp_buffer(uint32_t size, bool zeroed) = 0;
  virtual llvm::Value *variable_slot(const frontend::Type &t) = 0;
  virtual Value load(llvm::Value *ptr, uint32_t align, const frontend::Type &t) = 0;
  // SRC (of type SRC_T) into DST laid out as DST_T: integers resized, strings cut or padded.
  virtual void store(llvm::Value *dst, uint32_t align, const frontend::Type &dst_t, Value src,
                     const frontend::Type &src_t) = 0;
  virtual Value string_value(const frontend::StringExpr &e) = 0;

  // Maps, builtins and calls.
  virtual Value map_read(const frontend::MapExpr &m) = 0;
  virtual void map_write(const frontend::MapExpr &m, Value v, const frontend::Type &v_type) = 0;
  // `M = CALL`: false when CALL is no aggregation (then M is assigned its value).
  virtual bool map_aggregate(const frontend::MapExpr &m, const frontend::CallExpr &call) = 0;
  virtual Value builtin_value(const frontend::BuiltinExpr &e) = 0;
  virtual Value call_value(const frontend::CallExpr &e) = 0;

  // What a back end may lower its own way, or refuse.
  virtual Value deref_value(const frontend::UnaryExpr &e) = 0;
  virtual Value address_of(const frontend::UnaryExpr &e) = 0; // &$x
  virtual Value index_value(const frontend::IndexExpr &e) = 0;
  virtual Value field_value(const frontend::FieldExpr &e) = 0; // all but a tuple's fields
  // == and != on memory values; nullopt for integers.
  virtual std::optional<Value> memory_compare(const frontend::BinaryExpr &e, Value l,
                                              Value r) = 0;
  virtual std::string operator_error(const frontend::BinaryExpr &e) = 0; // non-integer operands
  virtual void lower_while(const frontend::WhileStmt &s); // a loop the verifier sees end
  llvm::BasicBlock *probe_end_ = nullptr; // return's target
  // A loop's body: `continue` branches to NEXT, `break` to EXIT.
  void lower_loop_body(const frontend::BlockStmt &body, llvm::BasicBlock *next,
                       llvm::BasicBlock *exit);

private:
  Value lower_expr_here(const frontend::Expr &e);
  Value lower_binary(const frontend::BinaryExpr &e);
  Value lower_logical(const frontend::BinaryExpr &e);
  Value lower_unary(const frontend::UnaryExpr &e);
  Value lower_incdec(const frontend::UnaryExpr &e);
  Value lower_ternary(const frontend::TernaryExpr &e);
  Value lower_array_cast(const frontend::CastExpr &c);
  Value lower_tuple(const frontend::TupleExpr &e);
  Value lower_field(const frontend::FieldExpr &e);
  Value lower_tuple_elem(const frontend::Expr &base, size_t i);
  void lower_map_assign(const frontend::MapAssignStmt &s);
  void lower_var_assign(const frontend::VarAssignStmt &s);
  void lower_if(const frontend::IfStmt &s);
  void lower_jump(const frontend::JumpStmt &s);
  struct Loop {
    llvm::BasicBlock *next, *exit; // continue's and break's targets
  };
  std::vector<Loop> loops_;                 // around the statement being lowered
  // `lhs op= rhs` on integers: CUR (of type CUR_T, already read) combined with RHS.
  Value compound_value(frontend::BinaryOp op, Value cur, const frontend::Type &cur_t,
                       const frontend::Expr &rhs);
};

} // namespace gpubt::codegen
