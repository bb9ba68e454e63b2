// pystack frames -> text (see python_frames.h). Memory is read with process_vm_readv; a code
// object is checked to be one (its ob_type is PyCode_Type) before it is trusted.
#include "runtime/process/python_frames.h"

#include <sys/uio.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "runtime/process/python_interp.h"

namespace gpubt::runtime {
namespace {

constexpr size_t kMaxString = 4096, kMaxLineTable = 1 << 20;

struct CodeInfo {
  std::string filename, name, linetable;
  int first_line = 0;
};

std::mutex mu;
std::map<std::pair<int, uint64_t>, std::optional<CodeInfo>> code_cache;

bool read_mem(int pid, uint64_t addr, void *dst, size_t size) {
  iovec local{dst, size}, remote{reinterpret_cast<void *>(addr), size};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == ssize_t(size);
}

template <class T> std::optional<T> read_as(int pid, uint64_t addr) {
  T v;
  if (!read_mem(pid, addr, &v, sizeof v))
    return std::nullopt;
  return v;
}

void append_utf8(std::string &out, uint32_t c) {
  if (c < 0x80) {
    out += char(c);
  } else if (c < 0x800) {
    out += char(0xc0 | c >> 6);
    out += char(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    out += char(0xe0 | c >> 12);
    out += char(0x80 | (c >> 6 & 0x3f));
    out += char(0x80 | (c & 0x3f));
  } else {
    out += char(0xf0 | c >> 18);
    out += char(0x80 | (c >> 12 & 0x3f));
    out += char(0x80 | (c >> 6 & 0x3f));
    out += char(0x80 | (c & 0x3f));
  }
}

// A compact str object as UTF-8: ASCII ones hold their bytes after PyASCIIObject; others hold
// 1, 2 or 4 bytes a character (the state's kind) after PyCompactUnicodeObject.
std::optional<std::string> read_str(int pid, uint64_t obj, const PythonObjectLayout &l) {
  auto length = read_as<int64_t>(pid, obj + l.unicode_length);
  auto state = read_as<uint32_t>(pid, obj + l.unicode_state);
  if (!length || !state || *length < 0 || size_t(*length) > kMaxString)
    return std::nullopt;
  unsigned kind = *state >> 2 & 7, compact = *state >> 5 & 1, ascii = *state >> 6 & 1;
  if (!compact || (kind != 1 && kind != 2 && kind != 4))
    return std::nullopt;
  std::string raw(size_t(*length) * kind, '\0');
  if (!read_mem(pid, obj + (ascii ? l.ascii_size : l.compact_size), raw.data(), raw.size()))
    return std::nullopt;
  if (ascii)
    return raw;
  std::string out;
  for (size_t i = 0; i < raw.size(); i += kind) {
    uint32_t c = 0;
    memcpy(&c, raw.data() + i, kind); // little-endian
    append_utf8(out, c);
  }
  return out;
}

// Whether the object at OBJ is alive: a freed one's first word (ob_refcnt) holds pymalloc's free
// list link (an address, or 0 at the list's end). Counts of immortal objects (3.12+: 2^32 - 1
// and near it) are below the bound too.
bool alive(int pid, uint64_t obj) {
  auto refcnt = read_as<uint64_t>(pid, obj);
  return refcnt && *refcnt > 0 && *refcnt < (uint64_t(1) << 40);
}

std::optional<CodeInfo> read_code(int pid, uint64_t code, const PythonInterpreter &py) {
  const auto &l = py.objects;
  auto type = read_as<uint64_t>(pid, code + l.object_type);
  // A freed code object can still look like one (its type word intact) while its strings are
  // reused: named so, it would print another object's text.
  if (!type || *type != py.code_type || !alive(pid, code))
    return std::nullopt;
  auto filename = read_as<uint64_t>(pid, code + l.code_filename);
  auto name = read_as<uint64_t>(pid, code + l.code_name);
  auto table = read_as<uint64_t>(pid, code + l.code_linetable);
  auto first = read_as<int32_t>(pid, code + l.code_firstlineno);
  if (!filename || !name || !table || !first)
    return std::nullopt;
  CodeInfo info;
  info.first_line = *first;
  auto f = read_str(pid, *filename, l);
  auto n = read_str(pid, *name, l);
  auto size = read_as<int64_t>(pid, *table + l.bytes_size);
  if (!f || !n || !size || *size < 0 || size_t(*size) > kMaxLineTable)
    return std::nullopt;
  info.filename = *f;
  info.name = *n;
  info.linetable.resize(size_t(*size));
  if (!read_mem(pid, *table + l.bytes_data, info.linetable.data(), info.linetable.size()))
    return std::nullopt;
  return info;
}

const std::optional<CodeInfo> &code_info(int pid, uint64_t code, const PythonInterpreter &py) {
  std::lock_guard lock(mu);
  auto key = std::pair{pid, code};
  auto it = code_cache.find(key);
  if (it == code_cache.end() || !it->second) // an unreadable one may be readable later
    it = code_cache.insert_or_assign(key, read_code(pid, code, py)).first;
  return it->second;
}

bool is_shim(const abi::PyStackFrame &f, const PythonInterpreter &py) {
  uint32_t owner = uint32_t(f.code >> abi::kPyOwnerShift);
  return (f.code & abi::kPyCodeMask) == 0 ||
         (py.process.owner_cstack != abi::kPyNoOffset && owner == py.process.owner_cstack);
}

uint32_t scan_varint(const std::string &t, size_t &i) {
  uint32_t read = uint8_t(t[i++]), val = read & 63, shift = 0;
  while (read & 64 && i < t.size()) {
    read = uint8_t(t[i++]);
    shift += 6;
    val |= (read & 63) << shift;
  }
  return val;
}

int scan_signed_varint(const std::string &t, size_t &i) {
  uint32_t u = scan_varint(t, i);
  return u & 1 ? -int(u >> 1) : int(u >> 1);
}

} // namespace

int python_line_of(const std::string &t, int first_line, int addr) {
  if (addr < 0)
    return first_line;
  int line = first_line, end = 0;
  for (size_t i = 0; i < t.size();) {
    uint8_t b = uint8_t(t[i]);
    int code = b >> 3 & 15, delta = 0;
    end += ((b & 7) + 1) * 2; // code units of two bytes
    size_t at = i + 1;
    if (code == 13 || code == 14) // no columns, long form: a signed line delta follows
      delta = scan_signed_varint(t, at);
    else if (code == 11 || code == 12) // one line, one or two below
      delta = code - 10;
    line += delta;
    if (addr < end)
      return (b >> 3) == 0x1f ? -1 : line; // code 15: no location
    for (++i; i < t.size() && !(uint8_t(t[i]) & 128); ++i) {
    }
  }
  return -1;
}

int python310_line_of(const std::string &t, int first_line, int addr) {
  if (addr < 0)
    return first_line;
  int line = first_line, end = 0;
  for (size_t i = 0; i + 1 < t.size(); i += 2) {
    int start = end, delta = int8_t(t[i + 1]);
    end += uint8_t(t[i]);
    if (delta != -128)
      line += delta;
    if (addr < end && start < end)
      return delta == -128 ? -1 : line;
  }
  return -1;
}

std::vector<std::string> splice_python_frames(const std::vector<std::string> &native,
                                              const std::vector<std::vector<std::string>> &groups) {
  std::vector<std::string> out;
  size_t next = 0;
  auto take_group = [&] { out.insert(out.end(), groups[next].begin(), groups[next].end()); ++next; };
  for (const auto &name : native) {
    bool eval_loop = name.starts_with("_PyEval_EvalFrameDefault") &&
                     (name.size() == 24 || name[24] == '+');
    if (eval_loop && next < groups.size())
      take_group();
    else
      out.push_back(name);
  }
  while (next < groups.size())
    take_group();
  return out;
}

std::vector<std::vector<std::string>> python_frame_groups(const abi::PyStackHeader &header,
                                                          std::span<const abi::PyStackFrame> frames) {
  std::vector<std::vector<std::string>> out;
  int pid = int(header.pid);
  if (header.status & abi::kPyStackNoInterpreter) {
    if (const auto &py = python_of(pid); !py)
      warn_python(py.error());
    return out;
  }
  if (header.status & abi::kPyStackNoThread)
    return out;
  const auto &py = python_of(pid);
  if (!py) {
    warn_python(py.error());
    return out;
  }
  size_t n = std::min<size_t>(header.status & 0xffff, frames.size());
  // A group ends at a shim (3.12+: below each eval loop call's first frame) or, in 3.11, with
  // the frame marked is_entry.
  bool entry_marks = py.value().process.owner_cstack == abi::kPyNoOffset;
  bool each_own = py.value().frame_objects; // 3.10: an eval loop call per frame
  bool open = false;
  for (const auto &f : frames.first(n)) {
    if (is_shim(f, py.value())) {
      open = false;
      continue;
    }
    if (!open)
      out.emplace_back();
    open = !each_own && !(entry_marks && (f.code >> abi::kPyEntryShift & 1));
    uint64_t code = f.code & abi::kPyCodeMask;
    const auto &info = code_info(pid, code, py.value());
    if (!info) {
      out.back().push_back(fmt::format("?? (code object {:#x})", code));
      continue;
    }
    int line = 0;
    if (each_own) { // f_lasti: the instruction's index (-1 before the first)
      line = python310_line_of(info->linetable, info->first_line, int32_t(uint32_t(f.instr)) * 2);
    } else {
      int64_t addr = int64_t(f.instr) - int64_t(code + py.value().objects.code_adaptive);
      line = python_line_of(info->linetable, info->first_line, int(addr / 2) * 2);
    }
    out.back().push_back(fmt::format("{}:{} {}", info->filename, line, info->name));
  }
  return out;
}

void remember_python_frames(int pid, std::span<const abi::PyStackFrame> frames) {
  const auto &py = python_of(pid);
  if (!py)
    return;
  for (const auto &f : frames)
    if (!is_shim(f, py.value()))
      code_info(pid, f.code & abi::kPyCodeMask, py.value());
}

} // namespace gpubt::runtime
