// The function table and bpftrace 0.17's arity messages.
#include "stdlib/functions.h"

#include <cstdlib>
#include <string>

namespace gpubt::stdlib {
namespace {

using frontend::TypeKind;
using A = ArgRule;
constexpr uint8_t kBoth = kHostContext | kGpuContext;

#define AGG(name, id, n, r0, kind)                                                             \
  {name, FunctionId::id, FunctionKind::Aggregation, n, n, {r0, A::IntegerLiteral, A::IntegerLiteral, \
   A::IntegerLiteral}, TypeKind::kind, 8, kBoth}

constexpr std::array kFunctions = std::to_array<FunctionInfo>({
    AGG("count", Count, 0, A::Any, Count),
    AGG("sum", Sum, 1, A::Integer, Sum),
    AGG("avg", Avg, 1, A::Integer, Avg),
    AGG("min", Min, 1, A::Integer, Min),
    AGG("max", Max, 1, A::Integer, Max),
    AGG("stats", Stats, 1, A::Integer, Stats),
    AGG("hist", Hist, 1, A::Integer, Hist),
    AGG("lhist", Lhist, 4, A::Integer, Lhist), // lhist(value, min, max, step)
    // tseries(value, interval_ns, num_intervals[, "avg"|"max"|"min"|"sum"]): bpftrace head's
    // time series, the value of each of the last num_intervals intervals (host probes).
    {"tseries", FunctionId::Tseries, FunctionKind::Aggregation, 3, 4,
     {A::Integer, A::IntegerLiteral, A::IntegerLiteral, A::StringLiteral}, TypeKind::Tseries, 8,
     kHostContext},
    {"printf", FunctionId::Printf, FunctionKind::Statement, 1, kVariadic,
     {A::Format, A::Any, A::Any, A::Any}, TypeKind::None, 0, kBoth},
    // errorf(fmt, ...), warnf(fmt, ...): printf to stderr after "stdin:L:C-C: ERROR: " (or
    // WARNING, which --no-warnings silences), with the source line and its caret.
    {"errorf", FunctionId::Errorf, FunctionKind::Statement, 1, kVariadic,
     {A::Format, A::Any, A::Any, A::Any}, TypeKind::None, 0, kHostContext},
    {"warnf", FunctionId::Warnf, FunctionKind::Statement, 1, kVariadic,
     {A::Format, A::Any, A::Any, A::Any}, TypeKind::None, 0, kHostContext},
    // debugf(fmt, ...): bpf_trace_printk, into the kernel's trace buffer (bpftrace 0.19's); up
    // to 3 arguments.
    {"debugf", FunctionId::Debugf, FunctionKind::Statement, 1, kVariadic,
     {A::Format, A::Any, A::Any, A::Any}, TypeKind::None, 0, kHostContext},
    // system(fmt, ...) runs the formatted command (--unsafe only); cat(fmt, ...) prints a file.
    {"system", FunctionId::System, FunctionKind::Statement, 1, kVariadic,
     {A::Format, A::Any, A::Any, A::Any}, TypeKind::None, 0, kHostContext},
    {"cat", FunctionId::Cat, FunctionKind::Statement, 1, kVariadic,
     {A::Format, A::Any, A::Any, A::Any}, TypeKind::None, 0, kHostContext},
    {"print", FunctionId::Print, FunctionKind::Statement, 1, 3, {A::Any, A::Integer, A::Integer, A::Any},
     TypeKind::None, 0, kHostContext},
    {"clear", FunctionId::Clear, FunctionKind::Statement, 1, 1, {A::Map, A::Any, A::Any, A::Any},
     TypeKind::None, 0, kHostContext},
    // delete(@m[k]) (0.17), delete(@m, k) and delete(@scalar) (bpftrace 0.22): whether the
    // entry was there. The parser moves k into the map access.
    {"delete", FunctionId::Delete, FunctionKind::Value, 1, 1, {A::Map, A::Any, A::Any, A::Any},
     TypeKind::Integer, 1, kHostContext},
    // len(@m): how many keys the map has (bpftrace 0.21).
    {"len", FunctionId::Len, FunctionKind::Value, 1, 1, {A::Map, A::Any, A::Any, A::Any},
     TypeKind::Integer, 8, kHostContext},
    // has_key(@m, k): whether @m[k] is there (the parser moves k into the map access).
    {"has_key", FunctionId::HasKey, FunctionKind::Value, 1, 1, {A::Map, A::Any, A::Any, A::Any},
     TypeKind::Integer, 1, kHostContext},
    {"zero", FunctionId::Zero, FunctionKind::Statement, 1, 1, {A::Map, A::Any, A::Any, A::Any},
     TypeKind::None, 0, kHostContext},
    // exit([code]): the code (bpftrace 0.22) is gpubt's exit status (its low 8 bits).
    {"exit", FunctionId::Exit, FunctionKind::Statement, 0, 1,
     {A::Integer, A::Any, A::Any, A::Any}, TypeKind::None, 0, kHostContext},
    {"time", FunctionId::Time, FunctionKind::Statement, 0, 1,
     {A::StringLiteral, A::Any, A::Any, A::Any}, TypeKind::None, 0, kHostContext},
    // str(ptr[, len]) reads up to BPFTRACE_STRLEN (64) bytes.
    {"str", FunctionId::Str, FunctionKind::Value, 1, 2, {A::IntOrPointer, A::Integer, A::Any, A::Any},
     TypeKind::String, 64, kHostContext},
    // kname(func): a CUDA kernel's demangled name from its host stub or launch handle.
    {"kname", FunctionId::Kname, FunctionKind::Value, 1, 1, {A::Integer, A::Any, A::Any, A::Any},
     TypeKind::KernelName, 8, kHostContext},
    // nccl_rank(comm), nccl_nranks(comm): an NCCL communicator's rank and size as learned where
    // it was made (-1 if gpubt did not see it made); nccl_comm_id(comm): a 32-bit id, the same
    // on every rank of the communicator (0 if unknown); nccl_seq(comm): at a collective's uprobe
    // or uretprobe its own 0-based number on comm, elsewhere how many comm has issued.
    {"nccl_rank", FunctionId::NcclRank, FunctionKind::Value, 1, 1,
     {A::Integer, A::Any, A::Any, A::Any}, TypeKind::Integer, 8, kHostContext},
    {"nccl_nranks", FunctionId::NcclNranks, FunctionKind::Value, 1, 1,
     {A::Integer, A::Any, A::Any, A::Any}, TypeKind::Integer, 8, kHostContext},
    {"nccl_comm_id", FunctionId::NcclCommId, FunctionKind::Value, 1, 1,
     {A::Integer, A::Any, A::Any, A::Any}, TypeKind::Integer, 8, kHostContext},
    {"nccl_seq", FunctionId::NcclSeq, FunctionKind::Value, 1, 1,
     {A::Integer, A::Any, A::Any, A::Any}, TypeKind::Integer, 8, kHostContext},
    // nccl_nested(comm): 1 at a collective's uprobe or uretprobe when the call runs inside another
    // collective of the same thread on comm (ncclBcast calls ncclBroadcast): the same collective.
    {"nccl_nested", FunctionId::NcclNested, FunctionKind::Value, 1, 1,
     {A::Integer, A::Any, A::Any, A::Any}, TypeKind::Integer, 8, kHostContext},
    // deref(ptr): the uint64 at a user address, e.g. what an out-parameter (void **devPtr)
    // holds in a uretprobe; 0 if unreadable.
    {"deref", FunctionId::Deref, FunctionKind::Value, 1, 1, {A::Integer, A::Any, A::Any, A::Any},
     TypeKind::Integer, 8, kHostContext},
    // reg("sp"): a register of the probed thread, from the probe's pt_regs.
    {"reg", FunctionId::Reg, FunctionKind::Value, 1, 1, {A::StringLiteral, A::Any, A::Any, A::Any},
     TypeKind::Integer, 8, kHostContext},
    // uptr(p), kptr(p): p, read from user or kernel memory (str() reads user memory anyway).
    {"uptr", FunctionId::Uptr, FunctionKind::Value, 1, 1,
     {A::IntOrPointer, A::Any, A::Any, A::Any}, TypeKind::Integer, 8, kHostContext},
    {"kptr", FunctionId::Kptr, FunctionKind::Value, 1, 1,
     {A::IntOrPointer, A::Any, A::Any, A::Any}, TypeKind::Integer, 8, kHostContext},
    // popcount(n): how many bits of n are set (gpubt's: popcount(active_lanes) in gpu probes).
    {"popcount", FunctionId::Popcount, FunctionKind::Value, 1, 1,
     {A::Integer, A::Any, A::Any, A::Any}, TypeKind::Integer, 8, kBoth},
    // bswap(n): n's bytes reversed, as an unsigned integer of n's size.
    {"bswap", FunctionId::Bswap, FunctionKind::Value, 1, 1, {A::Integer, A::Any, A::Any, A::Any},
     TypeKind::Integer, 8, kHostContext},
    // strncmp(a, b, n): 0 if the strings agree in their first n characters, else 1.
    {"strncmp", FunctionId::Strncmp, FunctionKind::Value, 3, 3,
     {A::String, A::String, A::IntegerLiteral, A::Any}, TypeKind::Integer, 8, kHostContext},
    // strftime(fmt, nsecs): nsecs printed as local time through strftime (and %f: microseconds).
    {"strftime", FunctionId::Strftime, FunctionKind::Value, 2, 2,
     {A::StringLiteral, A::Integer, A::Any, A::Any}, TypeKind::Timestamp, 8, kHostContext},
    // sizeof(expr); sizeof(TYPE) is a literal the parser makes.
    {"sizeof", FunctionId::Sizeof, FunctionKind::Value, 1, 1, {A::Any, A::Any, A::Any, A::Any},
     TypeKind::Integer, 8, kHostContext},
    // buf(src[, len]): len bytes (a literal; otherwise at most 64) of an array, a string or
    // user memory, printed with %r: printable bytes as they are, others as \xNN.
    {"buf", FunctionId::Buf, FunctionKind::Value, 1, 2, {A::Any, A::Integer, A::Any, A::Any},
     TypeKind::Buffer, 64, kHostContext},
    // ntop([af,] addr): an IPv4 (integer, 4-byte array) or IPv6 (16-byte array) address as text.
    {"ntop", FunctionId::Ntop, FunctionKind::Value, 1, 2, {A::Any, A::Any, A::Any, A::Any},
     TypeKind::Inet, 24, kHostContext},
    // pton("addr"): the address's bytes, uint8[4] or uint8[16], known when compiling.
    {"pton", FunctionId::Pton, FunctionKind::Value, 1, 1, {A::StringLiteral, A::Any, A::Any, A::Any},
     TypeKind::Array, 4, kHostContext},
    // usym(addr): an address printed as a symbol of the probed process.
    {"usym", FunctionId::Usym, FunctionKind::Value, 1, 1, {A::Integer, A::Any, A::Any, A::Any},
     TypeKind::UserSym, 8, kHostContext},
    // kaddr("sym") / uaddr("sym"): a kernel or probed-binary symbol's address, found when compiling.
    {"kaddr", FunctionId::Kaddr, FunctionKind::Value, 1, 1, {A::Any, A::Any, A::Any, A::Any},
     TypeKind::Integer, 8, kHostContext},
    // percpu_kaddr("var"[, cpu]): the kernel per-CPU variable's address on CPU (default: this
    // one), through BTF (bpf_per_cpu_ptr, bpf_this_cpu_ptr); 0 for a CPU there is not.
    {"percpu_kaddr", FunctionId::PercpuKaddr, FunctionKind::Value, 1, 2,
     {A::StringLiteral, A::Integer, A::Any, A::Any}, TypeKind::Pointer, 8, kHostContext},
    {"uaddr", FunctionId::Uaddr, FunctionKind::Value, 1, 1, {A::Any, A::Any, A::Any, A::Any},
     TypeKind::Pointer, 8, kHostContext},
    // cgroup_path(id[, filter]): the cgroup's path in each mounted hierarchy, found when printed.
    {"cgroup_path", FunctionId::CgroupPath, FunctionKind::Value, 1, 2,
     {A::Integer, A::StringLiteral, A::Any, A::Any}, TypeKind::CgroupPath, 8, kHostContext},
    // strcontains(haystack, needle): 1 if needle occurs in haystack.
    {"strcontains", FunctionId::Strcontains, FunctionKind::Value, 2, 2,
     {A::String, A::String, A::Any, A::Any}, TypeKind::Integer, 8, kHostContext},
    // strlen(s): the bytes of s before its NUL (bpftrace 0.24's stdlib).
    {"strlen", FunctionId::Strlen, FunctionKind::Value, 1, 1, {A::String, A::Any, A::Any, A::Any},
     TypeKind::Integer, 8, kHostContext},
    // strerror(errno): printed as strerror(3) says.
    {"strerror", FunctionId::Strerror, FunctionKind::Value, 1, 1, {A::Integer, A::Any, A::Any, A::Any},
     TypeKind::Errno, 8, kHostContext},
    // signal_name(sig): printed as the signal's name, "Interrupt" for 2 (bpftrace 0.24's stdlib).
    {"signal_name", FunctionId::SignalName, FunctionKind::Value, 1, 1,
     {A::Integer, A::Any, A::Any, A::Any}, TypeKind::SignalName, 8, kHostContext},
    // macaddr(addr): 6 bytes of an array or of user memory, printed as 00:11:22:33:44:55.
    {"macaddr", FunctionId::Macaddr, FunctionKind::Value, 1, 1, {A::Any, A::Any, A::Any, A::Any},
     TypeKind::MacAddr, 6, kHostContext},
    // join(argv[, delim]): the strings of a NULL-terminated char *[] (at most 16), one line.
    {"join", FunctionId::Join, FunctionKind::Statement, 1, 2,
     {A::Any, A::StringLiteral, A::Any, A::Any}, TypeKind::None, 0, kHostContext},
});

#undef AGG

std::string count_words(int n, const char *noun) {
  if (n == 1)
    return std::string("one ") + noun;
  return std::to_string(n) + " " + noun + "s";
}

} // namespace

const FunctionInfo *find_function(std::string_view name) {
  for (const auto &f : kFunctions)
    if (f.name == name)
      return &f;
  return nullptr;
}

std::vector<std::string> function_names() {
  std::vector<std::string> names;
  for (const auto &f : kFunctions)
    names.emplace_back(f.name);
  return names;
}

const FunctionInfo &function_info(FunctionId id) {
  for (const auto &f : kFunctions)
    if (f.id == id)
      return f;
  std::abort(); // every id has its row
}

ArgRule arg_rule(const FunctionInfo &f, size_t index) {
  return f.args[index < f.args.size() ? index : f.args.size() - 1];
}

std::string arity_error(const FunctionInfo &f, size_t n) {
  std::string head = std::string(f.name) + "() ";
  std::string provided = " (" + std::to_string(n) + " provided)";
  if (n >= f.min_args && (f.max_args == kVariadic || n <= f.max_args))
    return "";
  if (f.min_args == f.max_args)
    return head + "requires " + (f.min_args == 0 ? "no arguments" : count_words(f.min_args, "argument")) +
           provided;
  if (n < f.min_args)
    return head + "requires at least " + count_words(f.min_args, "argument") + provided;
  return head + "takes up to " + count_words(f.max_args, "argument") + provided;
}

} // namespace gpubt::stdlib
