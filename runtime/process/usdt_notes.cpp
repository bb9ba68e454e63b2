// Reads .note.stapsdt through libelf. Note addresses are link-time; a prelinked or moved file
// says by how much through .stapsdt.base, as systemtap defines it.
#include "runtime/process/usdt_notes.h"
#include "runtime/abi/unique_fd.h"
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <memory>
#include <sstream>

namespace gpubt::runtime {
namespace {

constexpr uint32_t kNtStapsdt = 3;

struct ElfCloser {
  void operator()(Elf *e) const { elf_end(e); }
};

struct Layout {
  std::vector<GElf_Phdr> loads;
  std::vector<GElf_Shdr> sections;
  uint64_t base_addr = 0; // .stapsdt.base's address; 0 when absent
};

bool in_range(uint64_t a, uint64_t lo, uint64_t size) { return a >= lo && a - lo < size; }

// A probe's pc lies in an executable PT_LOAD segment.
bool pc_offset(const Layout &l, uint64_t addr, uint64_t &off) {
  for (const auto &ph : l.loads)
    if (in_range(addr, ph.p_vaddr, ph.p_filesz)) {
      off = addr - ph.p_vaddr + ph.p_offset;
      return true;
    }
  return false;
}

// A semaphore lies in a data section (.probes); the kernel wants its file offset.
uint64_t semaphore_offset(const Layout &l, uint64_t addr) {
  for (const auto &sh : l.sections)
    if (sh.sh_type != SHT_NOBITS && sh.sh_addr && in_range(addr, sh.sh_addr, sh.sh_size))
      return addr - sh.sh_addr + sh.sh_offset;
  return 0;
}

bool parse_int(std::string_view s, int64_t &v) {
  if (s.empty())
    return false;
  bool neg = s[0] == '-';
  if (neg || s[0] == '+')
    s.remove_prefix(1);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  uint64_t u = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), u, base);
  if (ec != std::errc() || end != s.data() + s.size())
    return false;
  v = neg ? int64_t(0 - u) : int64_t(u);
  return true;
}

std::string reg_name(std::string_view s) {
  return std::string(s.size() > 1 && s[0] == '%' ? s.substr(1) : s);
}

// OPERAND of one spec: %reg, $imm, or disp(%base[,%index[,scale]]).
bool parse_operand(std::string_view op, abi::UsdtArg &a) {
  if (op.empty())
    return false;
  if (op[0] == '%') {
    a.kind = abi::UsdtArg::Reg;
    a.reg = reg_name(op);
    return true;
  }
  if (op[0] == '$') {
    a.kind = abi::UsdtArg::Const;
    return parse_int(op.substr(1), a.value);
  }
  auto open = op.find('(');
  if (open == std::string_view::npos || op.back() != ')')
    return false;
  a.kind = abi::UsdtArg::Mem;
  if (open > 0 && !parse_int(op.substr(0, open), a.value))
    return false;
  std::string_view inside = op.substr(open + 1, op.size() - open - 2);
  std::vector<std::string_view> parts;
  for (size_t from = 0;;) {
    auto comma = inside.find(',', from);
    parts.push_back(inside.substr(from, comma - from));
    if (comma == std::string_view::npos)
      break;
    from = comma + 1;
  }
  if (parts.empty() || parts.size() > 3)
    return false;
  a.reg = reg_name(parts[0]);
  if (parts.size() > 1)
    a.index_reg = reg_name(parts[1]);
  if (parts.size() > 2) {
    int64_t scale = 0;
    if (!parse_int(parts[2], scale) || scale <= 0)
      return false;
    a.scale = uint32_t(scale);
  }
  return true;
}

} // namespace

Result<std::vector<abi::UsdtArg>> parse_usdt_args(const std::string &text) {
  std::vector<abi::UsdtArg> out;
  std::istringstream in(text);
  std::string spec;
  while (in >> spec) {
    abi::UsdtArg a;
    auto at = spec.find('@');
    int64_t size = 0;
    if (at == std::string::npos || !parse_int(spec.substr(0, at), size) || size == 0 ||
        !parse_operand(std::string_view(spec).substr(at + 1), a))
      return make_error("cannot parse USDT argument '" + spec + "'");
    a.is_signed = size < 0;
    a.size = uint32_t(size < 0 ? -size : size);
    if (a.size != 1 && a.size != 2 && a.size != 4 && a.size != 8)
      return make_error("cannot parse USDT argument '" + spec + "': size " +
                        std::to_string(a.size));
    out.push_back(std::move(a));
  }
  return out;
}

Result<std::vector<abi::UsdtSite>> read_usdt_sites(const std::string &path) {
  elf_version(EV_CURRENT);
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    return make_error("cannot open '" + path + "': " + strerror(errno));
  std::unique_ptr<Elf, ElfCloser> elf(elf_begin(fd.get(), ELF_C_READ_MMAP, nullptr));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF)
    return make_error("'" + path + "' is not an ELF file");

  Layout l;
  size_t nph = 0;
  elf_getphdrnum(elf.get(), &nph);
  for (size_t i = 0; i < nph; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf.get(), i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
      l.loads.push_back(ph);
  }
  size_t shstrndx = 0;
  elf_getshdrstrndx(elf.get(), &shstrndx);
  std::vector<Elf_Scn *> notes;
  for (Elf_Scn *scn = nullptr; (scn = elf_nextscn(elf.get(), scn));) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh))
      continue;
    l.sections.push_back(sh);
    const char *name = elf_strptr(elf.get(), shstrndx, sh.sh_name);
    if (!name)
      continue;
    if (!strcmp(name, ".stapsdt.base"))
      l.base_addr = sh.sh_addr;
    else if (sh.sh_type == SHT_NOTE && !strcmp(name, ".note.stapsdt"))
      notes.push_back(scn);
  }

  std::vector<abi::UsdtSite> out;
  for (Elf_Scn *scn : notes) {
    Elf_Data *data = elf_getdata(scn, nullptr);
    GElf_Nhdr nh;
    size_t off = 0, name_off = 0, desc_off = 0;
    while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
      auto *bytes = static_cast<const char *>(data->d_buf);
      if (nh.n_type != kNtStapsdt || nh.n_namesz != 8 ||
          strcmp(bytes + name_off, "stapsdt") != 0 || nh.n_descsz < 3 * 8 + 3)
        continue;
      uint64_t words[3];
      memcpy(words, bytes + desc_off, sizeof(words));
      const char *text = bytes + desc_off + 24, *end = bytes + desc_off + nh.n_descsz;
      std::string fields[3];
      for (auto &f : fields) {
        const char *nul = static_cast<const char *>(memchr(text, 0, end - text));
        if (!nul)
          break;
        f.assign(text, nul);
        text = nul + 1;
      }
      // Addresses move with the file's actual base, as .stapsdt.base shows.
      int64_t shift = l.base_addr && words[1] ? int64_t(l.base_addr - words[1]) : 0;
      abi::UsdtSite site;
      site.path = path;
      site.provider = fields[0];
      site.name = fields[1];
      if (!pc_offset(l, words[0] + shift, site.offset))
        continue;
      if (words[2])
        site.semaphore = semaphore_offset(l, words[2] + shift);
      auto args = parse_usdt_args(fields[2]);
      if (!args)
        return make_error(path + ": probe " + site.provider + ":" + site.name + ": " +
                          args.error());
      site.args = std::move(*args);
      out.push_back(std::move(site));
    }
  }
  return out;
}

} // namespace gpubt::runtime
