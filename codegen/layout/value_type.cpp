// frontend::Type -> the abi types the runtime prints by (value_type.h).
#include "codegen/layout/value_type.h"

namespace gpubt::codegen::layout {

using frontend::Type;
using frontend::TypeKind;

abi::ValueType to_value_type(const Type &t) {
  abi::ValueType v;
  v.size = t.size;
  switch (t.kind) {
  case TypeKind::None:
    v.kind = abi::ValueType::None;
    v.size = 0;
    break;
  case TypeKind::Integer:
    v.kind = t.is_bool ? abi::ValueType::Bool
             : t.is_signed ? abi::ValueType::Int : abi::ValueType::UInt;
    break;
  case TypeKind::String:
    v.kind = abi::ValueType::String;
    break;
  case TypeKind::Tuple:
    v.kind = t.is_named_tuple() ? abi::ValueType::NamedTuple : abi::ValueType::Tuple;
    v.names = t.names;
    v.offsets = frontend::tuple_offsets(t.elems, &v.size);
    for (const auto &e : t.elems)
      v.elems.push_back(to_value_type(e));
    break;
  case TypeKind::Record:
    v.kind = abi::ValueType::Record;
    v.offsets = t.offsets;
    v.names = t.names;
    for (const auto &e : t.elems)
      v.elems.push_back(to_value_type(e));
    break;
  case TypeKind::Array:
    v.kind = abi::ValueType::Array;
    v.elems.push_back(to_value_type(t.elems[0]));
    break;
  case TypeKind::Enum:
    v.kind = abi::ValueType::Enum;
    v.enum_name = t.enum_name;
    v.enum_signed = t.is_signed;
    break;
  case TypeKind::KernelName:
    v.kind = abi::ValueType::KernelName;
    v.size = 8;
    break;
  case TypeKind::UStack:
    v.kind = abi::ValueType::UStack;
    break;
  case TypeKind::KStack:
    v.kind = abi::ValueType::KStack;
    break;
  case TypeKind::PyStack:
    v.kind = abi::ValueType::PyStack;
    break;
  case TypeKind::UstackPy: // the Python part, then the native one
    v.kind = abi::ValueType::UstackPy;
    v.offsets = {0, t.elems[0].size};
    for (const auto &e : t.elems)
      v.elems.push_back(to_value_type(e));
    break;
  case TypeKind::UserSym:
    v.kind = abi::ValueType::UserSym;
    v.size = 8;
    break;
  case TypeKind::Probe:
    v.kind = abi::ValueType::Probe;
    v.size = 8;
    break;
  case TypeKind::Timestamp:
    v.kind = abi::ValueType::Timestamp;
    v.enum_name = t.enum_name; // strftime's format
    v.size = 8;
    break;
  case TypeKind::Buffer:
    v.kind = abi::ValueType::Buffer;
    break;
  case TypeKind::Inet:
    v.kind = abi::ValueType::Inet;
    break;
  case TypeKind::MacAddr:
    v.kind = abi::ValueType::MacAddr;
    break;
  case TypeKind::Errno:
    v.kind = abi::ValueType::Errno;
    v.size = 8;
    break;
  case TypeKind::SignalName:
    v.kind = abi::ValueType::SignalName;
    v.size = 8;
    break;
  case TypeKind::Username:
    v.kind = abi::ValueType::Username;
    v.size = 8;
    break;
  case TypeKind::CgroupPath:
    v.kind = abi::ValueType::CgroupPath;
    v.size = 8;
    break;
  case TypeKind::Count:
    v.kind = abi::ValueType::UInt;
    v.size = 8;
    break;
  case TypeKind::Pointer:
    v.kind = abi::ValueType::UInt;
    v.size = 8;
    v.pointer = true;
    break;
  default: // Sum, Min, Max, Avg, Stats, Hist, Lhist, Tseries: the scalar inside
    v.kind = t.is_signed ? abi::ValueType::Int : abi::ValueType::UInt;
    v.size = 8;
    break;
  }
  return v;
}

abi::AggKind to_agg_kind(TypeKind k) {
  switch (k) {
  case TypeKind::Count: return abi::AggKind::Count;
  case TypeKind::Sum: return abi::AggKind::Sum;
  case TypeKind::Min: return abi::AggKind::Min;
  case TypeKind::Max: return abi::AggKind::Max;
  case TypeKind::Avg: return abi::AggKind::Avg;
  case TypeKind::Stats: return abi::AggKind::Stats;
  case TypeKind::Hist: return abi::AggKind::Hist;
  case TypeKind::Lhist: return abi::AggKind::Lhist;
  case TypeKind::Tseries: return abi::AggKind::Tseries;
  default: return abi::AggKind::None;
  }
}

} // namespace gpubt::codegen::layout
