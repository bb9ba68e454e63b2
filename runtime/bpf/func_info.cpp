// BTF func_info for programs with callbacks (func_info.h).
#include "runtime/bpf/func_info.h"

#include <bpf/bpf.h>
#include <cerrno>
#include <cstring>
#include <linux/btf.h>
#include <set>
#include <string>

namespace gpubt::runtime {

namespace {

constexpr uint8_t kLdImm64 = 0x18, kPseudoFunc = 4;

// The instruction indexes the program's ld_imm64 function references point at.
std::set<uint32_t> callbacks_of(const std::vector<bpf_insn> &insns) {
  std::set<uint32_t> out;
  for (size_t i = 0; i + 1 < insns.size(); ++i)
    if (insns[i].code == kLdImm64) {
      if (insns[i].src_reg == kPseudoFunc)
        out.insert(static_cast<uint32_t>(int64_t(i) + 1 + insns[i].imm));
      ++i; // the second half
    }
  return out;
}

// Types: [1] long, [2] void *, [3] long (void *), [4] FUNC gpubt_main, [5] long (void *, void *,
// void *, void *), [6] FUNC gpubt_callback; static linkage, the kernel checks no more.
std::vector<uint8_t> minimal_btf() {
  std::string strs("\0long\0gpubt_main\0gpubt_callback\0a\0b\0c\0d\0", 40);
  auto name = [&](const char *s) { return static_cast<uint32_t>(strs.find(s)); };
  std::vector<uint32_t> t;
  auto type = [&](uint32_t name_off, uint32_t kind, uint32_t vlen, uint32_t size_or_type) {
    t.insert(t.end(), {name_off, (kind << 24) | vlen, size_or_type});
  };
  type(name("long"), BTF_KIND_INT, 0, 8);
  t.push_back((BTF_INT_SIGNED << 24) | 64);
  type(0, BTF_KIND_PTR, 0, 0);
  type(0, BTF_KIND_FUNC_PROTO, 1, 1);
  t.insert(t.end(), {name("a"), 2});
  type(name("gpubt_main"), BTF_KIND_FUNC, BTF_FUNC_STATIC, 3);
  type(0, BTF_KIND_FUNC_PROTO, 4, 1);
  for (const char *p : {"a", "b", "c", "d"})
    t.insert(t.end(), {name(p), 2});
  type(name("gpubt_callback"), BTF_KIND_FUNC, BTF_FUNC_STATIC, 5);

  btf_header h{};
  h.magic = BTF_MAGIC;
  h.version = BTF_VERSION;
  h.hdr_len = sizeof(h);
  h.type_off = 0;
  h.type_len = static_cast<uint32_t>(t.size() * 4);
  h.str_off = h.type_len;
  h.str_len = static_cast<uint32_t>(strs.size());
  std::vector<uint8_t> out(sizeof(h) + h.type_len + h.str_len);
  std::memcpy(out.data(), &h, sizeof(h));
  std::memcpy(out.data() + sizeof(h), t.data(), h.type_len);
  std::memcpy(out.data() + sizeof(h) + h.type_len, strs.data(), h.str_len);
  return out;
}

} // namespace

Result<FuncInfo> func_info_for(const std::vector<bpf_insn> &insns) {
  FuncInfo out;
  auto subprogs = callbacks_of(insns);
  if (subprogs.empty())
    return out;
  auto btf = minimal_btf();
  int fd = bpf_btf_load(btf.data(), btf.size(), nullptr);
  if (fd < 0)
    return make_error(std::string("cannot load the BTF of a for loop's callback: ") +
                      std::strerror(-fd));
  out.btf = UniqueFd(fd);
  out.info.push_back({0, 4});
  for (uint32_t at : subprogs)
    out.info.push_back({at, 6});
  return out;
}

} // namespace gpubt::runtime
