// The PTX instrumenter: edits are insertions at offsets of the original text (header, probe calls,
// the probes appended) and retargeted branches, so whatever it does not touch stays byte-identical.
#include "runtime/ptx/ptx_instrument.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "runtime/abi/probe_point.h"
#include "runtime/ptx/ptx_access_sites.h"
#include "runtime/ptx/ptx_inline.h"
#include "runtime/ptx/ptx_scan.h"

namespace gpubt::runtime {

namespace {

using ptx::Statement;
using ptx::TopItem;

struct Edit {
  size_t at;    // insert before this offset of the original text
  size_t erase; // bytes of the original replaced
  std::string text;
};

std::string apply_edits(std::string_view text, std::vector<Edit> edits) {
  std::stable_sort(edits.begin(), edits.end(),
                   [](const Edit &a, const Edit &b) { return a.at < b.at; });
  std::string out;
  size_t copied = 0;
  for (const Edit &e : edits) {
    out.append(text.substr(copied, e.at - copied));
    out += e.text;
    copied = e.at + e.erase;
  }
  out.append(text.substr(copied));
  return out;
}

// "9.0" -> 90; "sm_90a" -> 90; -1 when unreadable.
int version_number(std::string_view v) {
  size_t dot = v.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 >= v.size())
    return -1;
  try {
    return std::stoi(std::string(v.substr(0, dot))) * 10 +
           std::stoi(std::string(v.substr(dot + 1)));
  } catch (...) {
    return -1;
  }
}
int sm_number(std::string_view v) {
  if (v.substr(0, 3) != "sm_")
    return -1;
  try {
    return std::stoi(std::string(v.substr(3)));
  } catch (...) {
    return -1;
  }
}

// The value word of a header directive (".version 9.0" -> "9.0") and where it is.
struct HeaderValue {
  size_t at = 0;
  std::string value;
};
HeaderValue header_value(std::string_view text, const TopItem &item) {
  size_t at = ptx::skip_trivia(text, item.begin + item.words[0].size());
  size_t end = at;
  while (end < item.end && !std::isspace(static_cast<unsigned char>(text[end])) &&
         text[end] != ',' && text[end] != '/')
    ++end;
  return {at, std::string(text.substr(at, end - at))};
}

struct Header {
  const TopItem *version = nullptr, *target = nullptr, *address_size = nullptr;
};
Header find_header(const std::vector<TopItem> &items) {
  Header h;
  for (const TopItem &i : items) {
    if (i.name.empty() && !i.words.empty()) {
      if (i.words[0] == ".version")
        h.version = &i;
      else if (i.words[0] == ".target")
        h.target = &i;
      else if (i.words[0] == ".address_size")
        h.address_size = &i;
    }
  }
  return h;
}

// The probe module: its functions (by name), its body text to append, the prototypes.
struct Probes {
  std::map<std::string, std::string> functions; // requested name -> name in the output
  std::string prototypes;                       // one `.func (...) name(...);` per function
  std::string globals; // their variables: declared up front, as pasted probes use them
  std::string body;    // their functions, `.visible` dropped
  std::map<std::string, ptx::InlineFunction> inlines; // by output name: pasted at call sites
  int version = -1, sm = -1;
};

// A function's linkage: module-local, so ptxas may inline the probe into the kernel.
std::string drop_visible(std::string_view item) {
  std::string s(item);
  if (s.compare(0, 9, ".visible ") == 0)
    s.erase(0, 9);
  return s;
}

bool is_extern(const TopItem &i) {
  return std::find(i.words.begin(), i.words.end(), ".extern") != i.words.end();
}

Result<Probes> prepare_probes(std::string_view module, const std::string &probe_ptx) {
  auto items = ptx::scan_top_level(probe_ptx);
  if (!items)
    return make_error("probe PTX: " + items.error());
  // Names the probes define that the module also uses get a suffix; what they declare .extern
  // (vprintf) keeps its name, and the module's own declaration serves where it has one.
  std::map<std::string, std::string> renames;
  for (const TopItem &i : *items) {
    if (i.name.empty() || is_extern(i) || !ptx::has_token(module, i.name))
      continue;
    std::string name = i.name + "_gpubt";
    while (ptx::has_token(module, name) || ptx::has_token(probe_ptx, name))
      name += "_gpubt";
    renames[i.name] = name;
  }
  Probes p;
  Header h = find_header(*items);
  if (h.version)
    p.version = version_number(header_value(probe_ptx, *h.version).value);
  if (h.target)
    p.sm = sm_number(header_value(probe_ptx, *h.target).value);
  std::string_view t = probe_ptx;
  for (const TopItem &i : *items) {
    if (i.name.empty() || (is_extern(i) && ptx::has_token(module, i.name)))
      continue; // .version, .target, .address_size, .file, debug .sections, known externs
    std::string item = drop_visible(t.substr(i.begin, i.end - i.begin));
    if (i.is_function) {
      if (i.is_entry)
        return make_error("probe PTX: defines a kernel (" + i.name + "), not only functions");
      if (i.body_open) {
        p.functions[i.name] = renames.count(i.name) ? renames[i.name] : i.name;
        std::string proto = drop_visible(t.substr(i.begin, i.body_open - i.begin));
        while (!proto.empty() && std::isspace(static_cast<unsigned char>(proto.back())))
          proto.pop_back();
        p.prototypes += ptx::rename_tokens(proto, renames) + ";\n";
        if (auto f = ptx::prepare_inline(ptx::rename_tokens(item, renames)))
          p.inlines[p.functions[i.name]] = std::move(*f);
      }
    }
    (i.is_function ? p.body : p.globals) += ptx::rename_tokens(item, renames) + "\n\n";
  }
  return p;
}

// Where a line starts when only blanks precede AT on it, else AT itself.
size_t line_start(std::string_view text, size_t at) {
  size_t b = at;
  while (b > 0 && (text[b - 1] == ' ' || text[b - 1] == '\t'))
    --b;
  return b == 0 || text[b - 1] == '\n' ? b : at;
}

// The kernel's userdata (gpubt_userdata[INDEX]), loaded once at its entry into %gpubt_ud, so the
// load is off the exit path. One line, at the kernel's top level. Markers that code may follow on
// their line are block comments.
std::string userdata_load(const std::string &userdata, size_t index) {
  return ".reg .b64 %gpubt_ud; ld.global.u64 %gpubt_ud, [" + userdata + "+" +
         std::to_string(8 * index) + "]; /* gpubt: userdata */";
}

// PROBE with the kernel's userdata, pc 0 and ARGS after them (the point's parameters, widths
// BITS), under PREDICATE (may be empty), SETUP first: its body pasted (SITE makes its names
// unique), or a call where it could not be prepared for that.
std::string probe_call(const Probes &probes, const std::string &probe, const std::string &predicate,
                       const char *what, size_t site, const std::string &setup = "",
                       std::vector<std::string> args = {},
                       const std::vector<int> &bits = {64, 64}) {
  args.insert(args.begin(), {"%gpubt_ud", "0"});
  std::string open = std::string("{ // gpubt: ") + what + " probe\n" + setup;
  if (auto f = probes.inlines.find(probe); f != probes.inlines.end())
    return open +
           ptx::inline_call(f->second, args, "gpubt" + std::to_string(site) + "_", predicate) +
           "\n\t} /* gpubt */";
  std::string pred = predicate.empty() ? "" : predicate + " ";
  std::string call = "\t" + pred + "call (gpubt_ret), " + probe + ", (";
  for (size_t i = 0; i < args.size() && i < bits.size(); ++i) {
    std::string param = "gpubt_arg" + std::to_string(i), b = std::to_string(bits[i]);
    open += "\t.param .b" + b + " " + param + ";\n";
    call += (i ? ", " : "") + param;
    open += "\tst.param.b" + b + " [" + param + "], " + args[i] + ";\n";
  }
  return open + "\t.param .b32 gpubt_ret;\n" + call + ");\n\t} /* gpubt */";
}

// Before the statement at AT: a line of its own when AT starts its line (after blanks).
Edit insert_before(std::string_view text, size_t at, const std::string &block) {
  size_t b = line_start(text, at);
  return b == at && (at == 0 || text[at - 1] != '\n') ? Edit{at, 0, block + " "}
                                                      : Edit{b, 0, "\t" + block + "\n"};
}

// KIND's probe PROBE before each of SITES.
void call_at_sites(std::string_view text, const Probes &probes, const std::string &probe,
                   abi::ProbePointKind kind, const std::vector<ptx::ProbeSite> &sites,
                   size_t &site_number, std::vector<Edit> &edits) {
  const char *what = kind == abi::ProbePointKind::Barrier ? "barrier" : "memory";
  for (const auto &s : sites)
    edits.push_back(insert_before(text, s.at,
                                  probe_call(probes, probe, s.predicate, what, site_number++,
                                             s.setup, s.args, abi::probe_param_bits(kind))));
}

bool is_exit(const Statement &s) {
  return !s.is_label && !s.is_block &&
         (s.opcode == "ret" || s.opcode == "ret.uni" || s.opcode == "exit");
}

// Control never falls off the end after an unpredicated ret, exit, bra or trap.
bool ends_flow(const Statement &s) {
  return s.predicate.empty() && !s.is_label && !s.is_block &&
         (is_exit(s) || s.opcode == "bra" || s.opcode == "bra.uni" || s.opcode == "trap");
}

// A predicated `bra` (not bra.uni, which promises a uniform branch): its target and where it is.
struct Branch {
  size_t at = 0;
  std::string target;
};
std::optional<Branch> predicated_branch(std::string_view text, const Statement &s) {
  if (s.is_label || s.is_block || s.predicate.empty() || s.opcode != "bra")
    return std::nullopt;
  size_t at = ptx::skip_trivia(text, ptx::skip_trivia(text, s.begin + s.predicate.size()) + 3);
  size_t end = at;
  while (end < s.end && text[end] != ';' && !std::isspace(static_cast<unsigned char>(text[end])))
    ++end;
  return Branch{at, std::string(text.substr(at, end - at))};
}

bool plain_exit(const Statement &s) { return is_exit(s) && s.predicate.empty(); }

// The first statement from I that is not a .loc line (nor a label, with LABELS).
size_t next_code(const std::vector<Statement> &stmts, size_t i, bool labels) {
  while (i < stmts.size() && (stmts[i].is_label ? labels : stmts[i].opcode == ".loc"))
    ++i;
  return i;
}

// A new label name for the exit a branch to LABEL reaches, past the exit probe pasted there.
std::string past_probe_label(std::string_view text, const std::string &label) {
  std::string name = label + "_gpubt_exit";
  while (ptx::has_token(text, name))
    name += "_gpubt";
  return name;
}

struct HoistedExits {
  std::set<size_t> decided; // exits whose probe runs only before their branch
  std::map<size_t, std::set<std::string>> past_probe; // exit -> labels to put past its probe
};

// ptxas turns `@P bra L; exit` and `@P bra L` to a lone `L: ret` into a predicated EXIT, so the
// leaving lanes go as soon as the branch decides it. A probe pasted before such an exit stands
// behind a divergent branch instead, where those lanes may wait for the others and their exit
// times come out wrong: so these probes go before the branch, under its condition.
HoistedExits hoist_exit_probes(std::string_view text, const std::vector<Statement> &stmts,
                               const std::function<std::string(const std::string &)> &probe,
                               std::vector<Edit> &edits) {
  std::map<std::string, size_t> exit_labels; // depth-1 label -> the plain exit it leads to
  for (size_t i = 0; i < stmts.size(); ++i)
    if (size_t j = next_code(stmts, i, true);
        stmts[i].is_label && stmts[i].depth == 1 && j < stmts.size() && plain_exit(stmts[j]))
      exit_labels[stmts[i].opcode] = j;
  HoistedExits out;
  for (size_t i = 0; i < stmts.size(); ++i) {
    const Statement &s = stmts[i];
    auto bra = predicated_branch(text, s);
    if (!bra)
      continue;
    // `@P bra L; exit`: the lanes falling through leave, and nothing else reaches that exit.
    if (size_t j = next_code(stmts, i + 1, false); j < stmts.size() && plain_exit(stmts[j])) {
      edits.push_back(insert_before(text, s.begin, probe(ptx::negate_predicate(s.predicate))));
      out.decided.insert(j);
    }
    // `@P bra L` to `L: ret`: the lanes branching leave; this branch goes past the probe pasted
    // at L, which other paths to L still run.
    auto exit = exit_labels.find(bra->target);
    if (s.depth != 1 || exit == exit_labels.end())
      continue;
    std::string past = past_probe_label(text, bra->target);
    edits.push_back(insert_before(text, s.begin, probe(s.predicate)));
    edits.push_back({bra->at, bra->target.size(), past});
    out.past_probe[exit->second].insert(past);
  }
  return out;
}

// Whether a probe's result can depend on when it runs: it reads a clock, or calls what might.
// Hoisting costs the common `if (i >= n) return;` kernel a guarded branch per warp (on the
// H100, vectorAdd with `@ = count()` went from 1.057x to 1.073x), so only these probes pay it.
bool reads_time(const Probes &probes, const std::string &probe) {
  auto f = probes.inlines.find(probe);
  if (f == probes.inlines.end())
    return true;
  for (const char *token : {"%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%clock",
                            "%clock64", "call", "call.uni"})
    if (ptx::has_token(f->second.body, token))
      return true;
  return false;
}

bool declaration(const Statement &s) {
  static const std::set<std::string> decls = {".reg",   ".local",  ".shared", ".param",
                                              ".const", ".pragma", ".loc",    ".file"};
  return !s.is_label && !s.is_block && decls.count(s.opcode);
}

Status instrument_kernel(std::string_view text, const TopItem &kernel, const PtxKernelProbes &p,
                         const Probes &probes, const std::string &userdata, size_t index,
                         size_t &sites, std::vector<Edit> &edits) {
  auto body = ptx::scan_body(text, kernel.body_open, kernel.body_close);
  if (!body)
    return Error{"kernel " + kernel.name + ": " + body.error()};
  const auto &stmts = *body;
  size_t entry = kernel.body_close;
  for (const Statement &s : stmts)
    if (s.depth > 1 || !declaration(s)) {
      entry = s.begin;
      break;
    }
  edits.push_back(insert_before(text, entry, userdata_load(userdata, index)));
  if (!p.entry_probe.empty())
    edits.push_back(
        insert_before(text, entry, probe_call(probes, p.entry_probe, "", "entry", sites++)));
  if (!p.exit_probe.empty()) {
    auto exit_probe = [&](const std::string &predicate) {
      return probe_call(probes, p.exit_probe, predicate, "exit", sites++);
    };
    HoistedExits hoisted;
    if (reads_time(probes, p.exit_probe))
      hoisted = hoist_exit_probes(text, stmts, exit_probe, edits);
    const Statement *last = nullptr;
    for (size_t i = 0; i < stmts.size(); ++i) {
      const Statement &s = stmts[i];
      if (s.depth == 1 && !(s.is_block || s.opcode == ".loc"))
        last = &s;
      if (is_exit(s) && !hoisted.decided.count(i))
        edits.push_back(insert_before(text, s.begin, exit_probe(s.predicate)));
      for (const std::string &label : hoisted.past_probe[i])
        edits.push_back(insert_before(text, s.begin, label + ":"));
    }
    if (!last || !ends_flow(*last)) // falling off the end returns too
      edits.push_back(insert_before(text, kernel.body_close, exit_probe("")));
  }
  if (!p.memory_probe.empty())
    call_at_sites(text, probes, p.memory_probe, abi::ProbePointKind::MemoryAccess,
                  ptx::memory_sites(text, stmts, p.memory_access), sites, edits);
  if (!p.barrier_probe.empty())
    call_at_sites(text, probes, p.barrier_probe, abi::ProbePointKind::Barrier,
                  ptx::barrier_sites(text, stmts), sites, edits);
  return Ok{};
}

} // namespace

Result<std::string> instrument_ptx(std::string_view module, const PtxInstrumentOptions &options) {
  auto items = ptx::scan_top_level(module);
  if (!items)
    return Error{items.error()};
  if (ptx::has_token(module, options.userdata_symbol) ||
      module.find("// gpubt: begin probes") != std::string_view::npos)
    return make_error("the PTX module is instrumented already");
  auto probes = prepare_probes(module, options.probe_ptx);
  if (!probes)
    return Error{probes.error()};

  std::map<std::string, const TopItem *> kernels;
  for (const TopItem &i : *items)
    if (i.is_entry && i.body_open)
      kernels[i.name] = &i;

  std::vector<Edit> edits;
  std::set<std::string> seen;
  size_t sites = 0;
  for (size_t k = 0; k < options.kernels.size(); ++k) {
    const PtxKernelProbes &p = options.kernels[k];
    auto it = kernels.find(p.kernel);
    if (it == kernels.end())
      return make_error("kernel " + p.kernel + " is not defined in the PTX module");
    if (!seen.insert(p.kernel).second)
      return make_error("kernel " + p.kernel + " is listed twice");
    PtxKernelProbes named = p;
    for (std::string *f :
         {&named.entry_probe, &named.exit_probe, &named.memory_probe, &named.barrier_probe}) {
      if (f->empty())
        continue;
      auto fn = probes->functions.find(*f);
      if (fn == probes->functions.end())
        return make_error("probe function " + *f + " is not in the probe PTX");
      *f = fn->second;
    }
    if (auto st = instrument_kernel(module, *it->second, named, *probes, options.userdata_symbol, k,
                                    sites, edits); !st)
      return Error{st.error()};
  }

  Header h = find_header(*items);
  if (!h.version || !h.target)
    return make_error("PTX module without .version or .target");
  HeaderValue version = header_value(module, *h.version), target = header_value(module, *h.target);
  int v = version_number(version.value), sm = sm_number(target.value);
  if (v < 0 || sm < 0)
    return make_error("PTX module with an unreadable .version or .target");
  if (probes->version > v) {
    if (options.max_ptx_isa && probes->version > options.max_ptx_isa)
      return make_error("the probes need PTX ISA " + std::to_string(probes->version / 10) + "." +
                        std::to_string(probes->version % 10) + ", above what this CUDA takes");
    edits.push_back(
        {version.at, version.value.size(),
         std::to_string(probes->version / 10) + "." + std::to_string(probes->version % 10)});
  }
  if (probes->sm > sm) {
    if (options.max_sm && probes->sm > options.max_sm)
      return make_error("the probes need sm_" + std::to_string(probes->sm) +
                        ", above the GPU's sm_" + std::to_string(options.max_sm));
    edits.push_back({target.at, target.value.size(), "sm_" + std::to_string(probes->sm)});
  } else if (options.max_sm && sm > options.max_sm) {
    return make_error("the module targets " + target.value + ", above the GPU's sm_" +
                      std::to_string(options.max_sm));
  }

  // Declarations go after the header so every kernel sees them before use.
  const TopItem *last_header = h.address_size ? h.address_size : h.target;
  if (h.version->end > last_header->end)
    last_header = h.version;
  std::string decls = "\n// gpubt: begin declarations\n.visible .global .align 8 .u64 " +
                      options.userdata_symbol + "[" +
                      std::to_string(std::max<size_t>(1, options.kernels.size())) + "];\n" +
                      probes->globals + probes->prototypes + "// gpubt: end declarations\n";
  edits.push_back({last_header->end, 0, decls});
  std::string tail = std::string(module.empty() || module.back() == '\n' ? "" : "\n") +
                     "\n// gpubt: begin probes\n" + probes->body + "// gpubt: end probes\n";
  edits.push_back({module.size(), 0, tail});
  return apply_edits(module, std::move(edits));
}

int ptx_isa_for_cuda(int cuda_version) {
  // From the PTX ISA release notes: CUDA 11.x -> 7.x; 12.0-12.5 -> 8.0-8.5, 12.6 -> 8.5,
  // 12.8 -> 8.7, 12.9 -> 8.8, 13.0 -> 9.0.
  static const std::map<int, int> table = {
      {11000, 70}, {11010, 71}, {11020, 72}, {11030, 73}, {11040, 74}, {11050, 75}, {11060, 76},
      {11070, 77}, {11080, 78}, {12000, 80}, {12010, 81}, {12020, 82}, {12030, 83}, {12040, 84},
      {12050, 85}, {12060, 85}, {12080, 87}, {12090, 88}, {13000, 90}};
  auto it = table.upper_bound(cuda_version);
  return it == table.begin() ? 0 : std::prev(it)->second;
}

} // namespace gpubt::runtime
