// Type constructors, equality and bpftrace-style names.
#include "frontend/types.h"

#include <algorithm>

namespace gpubt::frontend {

Type Type::integer(uint32_t size, bool is_signed) {
  Type t;
  t.kind = TypeKind::Integer;
  t.size = size;
  t.is_signed = is_signed;
  return t;
}

Type Type::boolean() {
  Type t = integer(1, false);
  t.is_bool = true;
  return t;
}

Type Type::string(uint32_t size) {
  Type t;
  t.kind = TypeKind::String;
  t.size = size;
  return t;
}

Type Type::tuple(std::vector<Type> elems) {
  Type t;
  t.kind = TypeKind::Tuple;
  tuple_offsets(elems, &t.size);
  t.elems = std::move(elems);
  return t;
}

Type Type::named_tuple(std::vector<Type> elems, std::vector<std::string> names) {
  Type t = tuple(std::move(elems));
  t.names = std::move(names);
  return t;
}

Type Type::pointer(Type pointee) {
  Type t;
  t.kind = TypeKind::Pointer;
  t.size = 8;
  t.elems.push_back(std::move(pointee));
  return t;
}

Type Type::array(Type elem, uint32_t count) {
  Type t;
  t.kind = TypeKind::Array;
  t.size = elem.size * count;
  t.elems.push_back(std::move(elem));
  return t;
}

bool Type::is_aggregate_value() const {
  return kind == TypeKind::String || kind == TypeKind::Tuple || kind == TypeKind::Record ||
         kind == TypeKind::Array || kind == TypeKind::Buffer || kind == TypeKind::Inet ||
         kind == TypeKind::MacAddr;
}

int field_index(const Type &record, std::string_view name) {
  for (size_t i = 0; i < record.names.size(); ++i)
    if (record.names[i] == name)
      return static_cast<int>(i);
  return -1;
}

int source_field(const Type &dst, const Type &src, size_t i) {
  if (dst.is_named_tuple() && src.is_named_tuple())
    return i < dst.names.size() ? field_index(src, dst.names[i]) : -1;
  return i < src.elems.size() ? static_cast<int>(i) : -1;
}

Type Type::aggregate(TypeKind kind, bool is_signed) {
  Type t;
  t.kind = kind;
  t.size = 8;
  t.is_signed = is_signed;
  return t;
}

bool Type::is_integer_like() const {
  switch (kind) {
  case TypeKind::Integer:
  case TypeKind::Enum:
  case TypeKind::UserSym:
  case TypeKind::Probe:
  case TypeKind::Timestamp:
  case TypeKind::KernelName:
  case TypeKind::Pointer:
  case TypeKind::Errno:
  case TypeKind::SignalName:
  case TypeKind::Username:
  case TypeKind::CgroupPath:
    return true;
  default:
    return false;
  }
}

bool Type::operator==(const Type &o) const {
  return kind == o.kind && size == o.size && is_signed == o.is_signed && is_bool == o.is_bool && elems == o.elems &&
         names == o.names && offsets == o.offsets && bitfields == o.bitfields && enum_name == o.enum_name && lhist_min == o.lhist_min && lhist_max == o.lhist_max &&
         lhist_step == o.lhist_step && tseries_interval_ns == o.tseries_interval_ns &&
         tseries_intervals == o.tseries_intervals && tseries_agg == o.tseries_agg;
}

static uint32_t alignment_of(const Type &t) {
  if (t.kind == TypeKind::String || t.kind == TypeKind::Buffer || t.kind == TypeKind::MacAddr)
    return 1;
  if (t.kind == TypeKind::Array)
    return alignment_of(t.elems[0]);
  if (t.kind == TypeKind::Tuple || t.kind == TypeKind::Record) {
    uint32_t a = 1;
    for (const auto &e : t.elems)
      a = std::max(a, alignment_of(e));
    return a;
  }
  return std::clamp<uint32_t>(t.size, 1, 8);
}

std::vector<uint32_t> tuple_offsets(const std::vector<Type> &elems, uint32_t *total_size) {
  std::vector<uint32_t> offsets;
  uint32_t off = 0, max_align = 1;
  for (const auto &e : elems) {
    uint32_t a = alignment_of(e);
    max_align = std::max(max_align, a);
    off = (off + a - 1) / a * a;
    offsets.push_back(off);
    off += e.size;
  }
  off = (off + max_align - 1) / max_align * max_align;
  if (total_size)
    *total_size = off;
  return offsets;
}

std::string to_string(const Type &t) {
  switch (t.kind) {
  case TypeKind::None:
    return "none";
  case TypeKind::Integer:
    if (t.is_bool)
      return "bool";
    return (t.is_signed ? "int" : "uint") + std::to_string(t.size * 8);
  case TypeKind::String:
    return "string[" + std::to_string(t.size) + "]";
  case TypeKind::Tuple: {
    if (t.is_named_tuple()) { // bpftrace's spelling: record { .a = int64, .b = string[2] }
      std::string s = "record { ";
      for (size_t i = 0; i < t.elems.size(); ++i)
        s += (i ? ", ." : ".") + t.names[i] + " = " + to_string(t.elems[i]);
      return s + " }";
    }
    std::string s = "(";
    for (size_t i = 0; i < t.elems.size(); ++i)
      s += (i ? "," : "") + to_string(t.elems[i]);
    return s + ")";
  }
  case TypeKind::Enum:
    return t.enum_name;
  case TypeKind::UserSym:
    return "usym";
  case TypeKind::Probe:
    return "probe";
  case TypeKind::Timestamp:
    return "timestamp";
  case TypeKind::KernelName:
    return "kname";
  case TypeKind::UStack:
    return "ustack";
  case TypeKind::KStack:
    return "kstack";
  case TypeKind::PyStack:
    return "pystack";
  case TypeKind::UstackPy:
    return "ustack(py)";
  case TypeKind::Pointer:
    return to_string(t.elems[0]) + " *";
  case TypeKind::Record:
    return t.enum_name;
  case TypeKind::Array:
    return to_string(t.elems[0]) + "[" +
           std::to_string(t.elems[0].size ? t.size / t.elems[0].size : 0) + "]";
  case TypeKind::Buffer:
    return "buffer[" + std::to_string(t.size ? t.size - 1 : 0) + "]";
  case TypeKind::Inet:
    return "inet";
  case TypeKind::MacAddr:
    return "macaddr";
  case TypeKind::Errno:
    return "strerror_t";
  case TypeKind::SignalName:
    return "string[64]"; // bpftrace's signal_name() is a string
  case TypeKind::Username:
    return "username";
  case TypeKind::CgroupPath:
    return "cgroup_path_t";
  case TypeKind::Count:
    return "count";
  case TypeKind::Sum:
    return "sum";
  case TypeKind::Min:
    return "min";
  case TypeKind::Max:
    return "max";
  case TypeKind::Avg:
    return "avg";
  case TypeKind::Stats:
    return "stats";
  case TypeKind::Hist:
    return "hist";
  case TypeKind::Lhist:
    return "lhist";
  case TypeKind::Tseries:
    return "tseries";
  }
  return "?";
}

} // namespace gpubt::frontend
