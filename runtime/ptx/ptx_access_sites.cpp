// Memory-access and barrier sites of a PTX kernel body (ptx_access_sites.h): the instruction's
// opcode says kind, space and size; its [address] operand becomes %gpubt_a.
#include "runtime/ptx/ptx_access_sites.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "runtime/abi/probe_point.h"
#include "runtime/ptx/ptx_inline.h"

namespace gpubt::runtime::ptx {
namespace {

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep)
      out.emplace_back();
    else
      out.back().push_back(c);
  }
  return out;
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
    ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
    --e;
  return std::string(s.substr(b, e - b));
}

// The instruction's operands: the text from after its opcode to ';', split on top-level commas.
std::vector<std::string> operands(std::string_view text, const Statement &s) {
  size_t from = text.find(s.opcode, s.begin + s.predicate.size()) + s.opcode.size();
  std::string_view body = text.substr(from, s.end - 1 - from);
  std::vector<std::string> out(1);
  int depth = 0;
  for (char c : body) {
    depth += (c == '[' || c == '{') - (c == ']' || c == '}');
    if (c == ',' && depth == 0)
      out.emplace_back();
    else
      out.back().push_back(c);
  }
  for (auto &o : out)
    o = trim(o);
  return out;
}

// Register widths the kernel declares: exact names and `%rd<N>` prefixes.
using Widths = std::map<std::string, int>;
Widths register_widths(std::string_view text, const std::vector<Statement> &stmts) {
  Widths w;
  for (const Statement &s : stmts) {
    if (s.is_label || s.is_block || s.opcode != ".reg")
      continue;
    std::string_view st = text.substr(s.begin, s.end - s.begin);
    int bits = st.find("64") != std::string_view::npos ? 64 : 32;
    for (const auto &[name, count] : declared_registers(st))
      w[name + (count ? "<>" : "")] = bits;
  }
  return w;
}
int width(const Widths &w, const std::string &reg) {
  if (auto it = w.find(reg); it != w.end())
    return it->second;
  size_t digits = reg.find_last_not_of("0123456789") + 1;
  auto it = w.find(reg.substr(0, digits) + "<>");
  return it == w.end() ? 64 : it->second;
}

// "%rd4+8" / "%r5" / "smem+16" / "sym" into %gpubt_a, a 64-bit address in the operand's space.
std::string address_setup(const std::string &operand, const Widths &w) {
  std::string base = operand, offset = "0";
  size_t plus = operand.find_first_of("+-", 1);
  if (plus != std::string::npos) {
    base = trim(operand.substr(0, plus));
    offset = trim(operand.substr(plus + (operand[plus] == '+')));
  }
  std::string s = "\t.reg .b64 %gpubt_a;\n";
  if (base[0] == '%' && width(w, base) == 32)
    s += "\tcvt.u64.u32 %gpubt_a, " + base + ";\n";
  else if (base[0] == '%')
    s += "\tmov.b64 %gpubt_a, " + base + ";\n";
  else
    s += "\tmov.u64 %gpubt_a, " + base + ";\n";
  if (offset != "0")
    s += "\tadd.s64 %gpubt_a, %gpubt_a, " + offset + ";\n";
  return s;
}

// A generic address's space, found at run time: its flags in %gpubt_f and, for shared and
// local, %gpubt_a as the window's offset (what the Sanitizer passes).
std::string generic_space_setup(uint32_t kind_flags) {
  auto flag = [&](uint32_t space) { return std::to_string(kind_flags | space); };
  return "\t.reg .b32 %gpubt_f;\n\t.reg .pred %gpubt_pl, %gpubt_ps;\n"
         "\tisspacep.local %gpubt_pl, %gpubt_a;\n"
         "\tisspacep.shared %gpubt_ps, %gpubt_a;\n"
         "\tselp.b32 %gpubt_f, " +
         flag(abi::FlagLocal) + ", " + flag(abi::FlagGlobal) +
         ", %gpubt_pl;\n"
         "\t@%gpubt_ps mov.b32 %gpubt_f, " +
         flag(abi::FlagShared) +
         ";\n"
         "\t@%gpubt_pl cvta.to.local.u64 %gpubt_a, %gpubt_a;\n"
         "\t@%gpubt_ps cvta.to.shared.u64 %gpubt_a, %gpubt_a;\n";
}

// Bytes of one access: the vector count times the type's (".v4" ".f32" -> 16; ".f16x2" -> 4).
uint32_t access_bytes(const std::vector<std::string> &parts) {
  uint32_t lanes = 1, bytes = 0;
  for (const auto &p : parts) {
    if (p.size() >= 2 && p[0] == 'v' && std::isdigit(static_cast<unsigned char>(p[1])))
      lanes = std::stoul(p.substr(1));
    else if (p.size() >= 2 && std::string_view("busf").find(p[0]) != std::string_view::npos &&
             std::isdigit(static_cast<unsigned char>(p[1])))
      bytes = std::stoul(p.substr(1)) / 8 * (p.find("x2") != std::string::npos ? 2 : 1);
    else if (p.rfind("bf16", 0) == 0)
      bytes = p == "bf16x2" ? 4 : 2;
  }
  return lanes * bytes;
}

struct Access {
  uint32_t kind = 0;  // abi::AccessRead/Write/Atomic
  uint32_t flags = 0; // the Sanitizer's read/write bits
  uint32_t space = 0; // abi::AccessGlobal/Shared/Local; 0 generic
  size_t address = 0; // operand index of [address]
};

// What an opcode accesses; kind 0: no memory access of the probes' (ld.param, tex, cp.async).
Access classify(const std::vector<std::string> &parts) {
  Access a;
  const std::string &op = parts[0];
  if (op == "ld" || op == "ldu")
    a = {abi::AccessRead, abi::FlagRead, 0, 1};
  else if (op == "st")
    a = {abi::AccessWrite, abi::FlagWrite, 0, 0};
  else if (op == "atom")
    a = {abi::AccessAtomic, abi::FlagRead | abi::FlagWrite, 0, 1};
  else if (op == "red")
    a = {abi::AccessAtomic, abi::FlagRead | abi::FlagWrite, 0, 0};
  else
    return {};
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string &p = parts[i];
    if (p == "param" || p == "const" || p == "async" || p.rfind("shared::cluster", 0) == 0)
      return {};
    if (p == "global")
      a.space = abi::AccessGlobal;
    else if (p == "shared" || p == "shared::cta")
      a.space = abi::AccessShared;
    else if (p == "local")
      a.space = abi::AccessLocal;
  }
  return a;
}

} // namespace

std::vector<ProbeSite> memory_sites(std::string_view text, const std::vector<Statement> &stmts,
                                    uint32_t access) {
  uint32_t kinds = access & abi::AccessKinds, spaces = access & abi::AccessSpaces;
  Widths widths = register_widths(text, stmts);
  std::vector<ProbeSite> out;
  for (const Statement &s : stmts) {
    if (s.is_label || s.is_block || s.opcode.empty() || s.opcode[0] == '.')
      continue;
    auto parts = split(s.opcode, '.');
    Access a = classify(parts);
    if (!a.kind || (kinds && !(kinds & a.kind)) || (spaces && a.space && !(spaces & a.space)))
      continue;
    auto ops = operands(text, s);
    if (a.address >= ops.size() || ops[a.address].size() < 3 || ops[a.address][0] != '[')
      continue;
    std::string address = trim(ops[a.address].substr(1, ops[a.address].find(']') - 1));
    if (address.empty())
      continue;
    ProbeSite site{s.begin, s.predicate, address_setup(address, widths), {}};
    std::string flags = std::to_string(a.flags | abi::memory_space_flag(a.space));
    if (!a.space) {
      site.setup += generic_space_setup(a.flags);
      flags = "%gpubt_f";
    }
    site.args = {"%gpubt_a", std::to_string(access_bytes(parts)), flags, "0"};
    out.push_back(std::move(site));
  }
  return out;
}

std::vector<ProbeSite> barrier_sites(std::string_view text, const std::vector<Statement> &stmts) {
  std::vector<ProbeSite> out;
  for (const Statement &s : stmts) {
    if (s.is_label || s.is_block)
      continue;
    auto parts = split(s.opcode, '.');
    if (parts[0] != "bar" && parts[0] != "barrier")
      continue;
    bool red = std::find(parts.begin(), parts.end(), "red") != parts.end();
    bool waits = red || std::find(parts.begin(), parts.end(), "sync") != parts.end() ||
                 std::find(parts.begin(), parts.end(), "arrive") != parts.end();
    if (!waits || std::find(parts.begin(), parts.end(), "warp") != parts.end() ||
        std::find(parts.begin(), parts.end(), "cluster") != parts.end())
      continue;
    auto ops = operands(text, s);
    size_t first = red ? 1 : 0, named = ops.size() - (red ? 1 : 0); // bar.red ends in its pred
    if (first >= ops.size() || ops[first].empty())
      continue;
    bool unaligned =
        parts[0] == "barrier" && std::find(parts.begin(), parts.end(), "aligned") == parts.end();
    out.push_back({s.begin,
                   s.predicate,
                   "",
                   {ops[first], first + 1 < named ? ops[first + 1] : "0", unaligned ? "1" : "0"}});
  }
  return out;
}

} // namespace gpubt::runtime::ptx
