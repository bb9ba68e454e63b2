// The types of gpubt values: integers, strings, tuples, and the aggregations maps can hold.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpubt::frontend {

enum class TypeKind : uint8_t {
  None,    // not yet resolved, or a statement-like call (printf, exit)
  Integer, // size 1/2/4/8, is_signed
  String,  // size bytes including the NUL
  Tuple,   // elems; a record `(a = 1, b = "x")` (bpftrace's records) has names too
  Enum,    // an integer (size, is_signed) printed by name through enum_name (stdlib catalog)
  UserSym, // u64 address printed as a user symbol (func in uprobes)
  Probe,   // u64 probe id printed as the probe's name
  Timestamp, // nsecs printed through strftime
  KernelName, // u64 kernel stub address or launch handle, printed demangled (kname())
  UStack,     // ustack: size/8 user return addresses (0-padded), printed one symbol a line
  KStack,     // kstack: the same of kernel return addresses, printed as kernel symbols
  PyStack,    // pystack: Python frames (runtime/abi/python_stack.h), printed `file:line function`
  UstackPy,   // ustack(py): elems {PyStack, UStack} laid end to end, printed spliced
  Pointer,    // an address (8 bytes) to elems[0]: (int8 *)arg0; arithmetic counts in elems[0]
  Record,     // a C struct or union (enum_name "struct Foo"): fields elems/names at offsets.
              // Behind a pointer a record may be a stub (no fields): CTypes has the definition.
  Array,      // size / elems[0].size elements of elems[0] (a C array in a record)
  Buffer,     // buf(): byte 0 the length, then size - 1 bytes of data, printed with escapes
  Inet,       // ntop(): 8 bytes address family (AF_INET, AF_INET6), then 16 bytes of address
  MacAddr,    // macaddr(): 6 bytes
  Errno,      // strerror(n): an integer printed as strerror(3)'s text
  SignalName, // signal_name(n): an integer printed as the signal's name (bpftrace's table)
  Username,   // username: a uid printed as its user name
  CgroupPath, // cgroup_path(id): a cgroup id printed as its paths in the mounted hierarchies
  // Aggregations: values of maps only, produced by count(), sum(), ...
  Count, Sum, Min, Max, Avg, Stats, Hist, Lhist,
  Tseries, // tseries(v, interval, n[, agg]): a ring of n intervals per key (bpftrace head's)
};

// How tseries() folds the values of one interval: the last one (bpftrace's default), or avg,
// max, min, sum.
enum class TseriesAgg : uint8_t { Last, Avg, Max, Min, Sum };

struct Type {
  TypeKind kind = TypeKind::None;
  uint32_t size = 0; // bytes, for Integer/Enum/String/Tuple (Tuple: sum of elems incl. padding)
  bool is_signed = false;
  std::vector<Type> elems;  // Tuple, Record fields, Array element, Pointer pointee
  std::vector<std::string> names; // Record: field names; Tuple: a record's names, else empty
  std::vector<uint32_t> offsets;  // Record: field byte offsets
  // Record: per field 0, or for a bitfield (bit shift << 8 | bit width): the field's bits
  // start `shift` bits into the byte at its offset.
  std::vector<uint16_t> bitfields;
  std::string enum_name;    // Enum: catalog name, e.g. "cudaError_t"; Timestamp: strftime format
  int64_t lhist_min = 0, lhist_max = 0, lhist_step = 0; // Lhist
  // Tseries: the interval's length, how many intervals a key keeps, how one interval folds
  int64_t tseries_interval_ns = 0, tseries_intervals = 0;
  TseriesAgg tseries_agg = TseriesAgg::Last;
  // Integer: bpftrace's bool, a uint8 that is 0 or 1 and prints as false/true.
  bool is_bool = false;
  // Pointer: into the BPF program's own memory (`&$x`), read as kernel memory in every probe.
  // Not part of ==: a variable may hold either kind of pointer.
  bool to_program_memory = false;

  static Type none() { return {}; }
  static Type integer(uint32_t size = 8, bool is_signed = true);
  static Type boolean();
  static Type string(uint32_t size);
  static Type tuple(std::vector<Type> elems);
  // bpftrace's record: a tuple whose fields have names (NAMES, one per elem).
  static Type named_tuple(std::vector<Type> elems, std::vector<std::string> names);
  static Type aggregate(TypeKind kind, bool is_signed = true);
  static Type pointer(Type pointee);
  static Type array(Type elem, uint32_t count);

  bool is_record_stub() const { return kind == TypeKind::Record && elems.empty(); }
  // A tuple with field names: bpftrace's record (TypeKind::Record is a C struct or union).
  bool is_named_tuple() const { return kind == TypeKind::Tuple && !names.empty(); }
  // Strings, tuples, records and arrays: values that live in memory, not in a register.
  bool is_aggregate_value() const;

  bool is_none() const { return kind == TypeKind::None; }
  bool is_integer_like() const; // Integer, Enum, UserSym, Probe, Timestamp, KernelName
  bool is_aggregate() const { return kind >= TypeKind::Count; }
  // count(), sum(), min(), max() or avg(): a map of one read as its integer over all CPUs
  // (bpftrace's castable aggregations, which its head also adds and compares).
  bool is_castable_aggregate() const { return kind >= TypeKind::Count && kind <= TypeKind::Avg; }
  bool operator==(const Type &o) const;
  bool operator!=(const Type &o) const { return !(*this == o); }
};

// bpftrace's spelling: "int64", "uint32", "string[4]", "(int64,string[4])", "count", "hist".
std::string to_string(const Type &t);

// The index of field `name` in a Record; -1 if none.
int field_index(const Type &record, std::string_view name);

// Which field of SRC fills field I of DST when one tuple is stored as the other: a record's
// field of the same name (records assigned in another order), else field I; -1 if none.
int source_field(const Type &dst, const Type &src, size_t i);

// Byte layout of a tuple: each element aligned to its natural alignment (max 8).
std::vector<uint32_t> tuple_offsets(const std::vector<Type> &elems, uint32_t *total_size);

} // namespace gpubt::frontend
