// Kernel types as C through libbpf's btf_dump, which orders definitions and emits forward
// declarations itself.
#include "frontend/clang/btf_definitions.h"

#include <bpf/btf.h>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <linux/btf.h>
#include <memory>
#include <unistd.h>

namespace gpubt::frontend {

namespace {

constexpr const char *kVmlinuxBtf = "/sys/kernel/btf/vmlinux";
// Records reachable through this many pointers are defined in full: `bio->bi_bdev->bd_disk->x`
// (bpftrace's tools go two deep). Each hop multiplies the C clang reads.
constexpr int kPointerHops = 2;

void append(void *ctx, const char *fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n <= 0)
    return;
  auto *out = static_cast<std::string *>(ctx);
  size_t at = out->size();
  out->resize(at + size_t(n) + 1);
  std::vsnprintf(out->data() + at, size_t(n) + 1, fmt, args);
  out->resize(at + size_t(n));
}

// Skips typedefs and qualifiers.
const struct btf_type *skip_mods(const struct btf *btf, __u32 &id) {
  const struct btf_type *t = btf__type_by_id(btf, id);
  while (t && (btf_is_typedef(t) || btf_is_mod(t))) {
    id = t->type;
    t = btf__type_by_id(btf, id);
  }
  return t;
}

// The records a record's members point at (through by-value members and arrays too): a
// script's `p->a->b` needs them complete, and btf_dump only declares them.
void pointed_records(const struct btf *btf, __u32 id, std::set<__u32> &out, int depth = 0) {
  const struct btf_type *t = skip_mods(btf, id);
  if (!t || !btf_is_composite(t) || depth > 8)
    return;
  const struct btf_member *m = btf_members(t);
  for (int i = 0; i < btf_vlen(t); ++i, ++m) {
    __u32 mid = m->type;
    const struct btf_type *mt = skip_mods(btf, mid);
    while (mt && btf_is_array(mt)) {
      mid = btf_array(mt)->type;
      mt = skip_mods(btf, mid);
    }
    if (!mt)
      continue;
    if (btf_is_composite(mt)) {
      pointed_records(btf, mid, out, depth + 1);
    } else if (btf_is_ptr(mt)) {
      __u32 pid = mt->type;
      const struct btf_type *pt = skip_mods(btf, pid);
      if (pt && btf_is_composite(pt))
        out.insert(pid);
    }
  }
}

// The enum (often anonymous) that defines the constant NAME; 0 if none.
__u32 enum_with(const struct btf *btf, const std::string &name) {
  for (__u32 id = 1, n = btf__type_cnt(btf); id < n; ++id) {
    const struct btf_type *t = btf__type_by_id(btf, id);
    if (!btf_is_enum(t))
      continue;
    const struct btf_enum *e = btf_enum(t);
    for (int i = 0; i < btf_vlen(t); ++i, ++e)
      if (name == btf__name_by_offset(btf, e->name_off))
        return id;
  }
  return 0;
}

} // namespace

bool kernel_btf_available() { return access(kVmlinuxBtf, R_OK) == 0; }

std::string kernel_type_definitions(const std::set<std::string> &names) {
  std::string out;
  if (names.empty() || !kernel_btf_available())
    return out;
  struct btf *btf = btf__load_vmlinux_btf();
  if (!btf)
    return out;
  struct btf_dump *d = btf_dump__new(btf, append, &out, nullptr);
  if (d) {
    std::set<__u32> ids;
    for (const auto &name : names) {
      if (name.rfind(kEnumerator, 0) == 0) {
        if (__u32 id = enum_with(btf, name.substr(strlen(kEnumerator))))
          ids.insert(id);
        continue;
      }
      int kind = BTF_KIND_TYPEDEF;
      std::string bare = name;
      if (name.rfind("struct ", 0) == 0) {
        kind = BTF_KIND_STRUCT;
        bare = name.substr(7);
      } else if (name.rfind("union ", 0) == 0) {
        kind = BTF_KIND_UNION;
        bare = name.substr(6);
      } else if (name.rfind("enum ", 0) == 0) {
        kind = BTF_KIND_ENUM;
        bare = name.substr(5);
      }
      int id = btf__find_by_name_kind(btf, bare.c_str(), kind);
      if (id > 0)
        ids.insert(__u32(id));
    }
    std::set<__u32> level = ids;
    for (int hop = 0; hop < kPointerHops; ++hop) {
      std::set<__u32> pointed;
      for (__u32 id : level)
        pointed_records(btf, id, pointed);
      level.clear();
      for (__u32 id : pointed)
        if (ids.insert(id).second)
          level.insert(id);
    }
    for (__u32 id : ids)
      btf_dump__dump_type(d, id);
    btf_dump__free(d);
  }
  btf__free(btf);
  return out;
}

std::optional<uint32_t> kernel_percpu_var_id(const std::string &name) {
  if (!kernel_btf_available())
    return std::nullopt;
  std::unique_ptr<struct btf, void (*)(struct btf *)> btf(btf__load_vmlinux_btf(), btf__free);
  if (!btf)
    return std::nullopt;
  int var = btf__find_by_name_kind(btf.get(), name.c_str(), BTF_KIND_VAR);
  int sec = btf__find_by_name_kind(btf.get(), ".data..percpu", BTF_KIND_DATASEC);
  if (var <= 0 || sec <= 0)
    return std::nullopt;
  const struct btf_type *t = btf__type_by_id(btf.get(), __u32(sec));
  const struct btf_var_secinfo *v = btf_var_secinfos(t);
  for (__u16 i = 0; i < btf_vlen(t); ++i, ++v)
    if (v->type == __u32(var))
      return uint32_t(var);
  return std::nullopt;
}

} // namespace gpubt::frontend
