// Inlining works on the function's own statements: its declared registers, locals and labels get
// a per-site prefix (so copies never clash with the kernel or each other), parameter loads become
// moves from the arguments, the return value's store goes, and `ret` becomes a branch to the end.
#include "runtime/ptx/ptx_inline.h"

#include <map>
#include <regex>

#include "runtime/ptx/ptx_scan.h"

namespace gpubt::runtime::ptx {
namespace {

constexpr const char *kSite = "GPUBTSITE_"; // stands for the call site's prefix
constexpr const char *kArg = "GPUBTARG";    // GPUBTARG<k>: stands for argument k
constexpr const char *kDone = "$GPUBTSITE_done";

void replace_all(std::string &s, const std::string &from, const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// Renames for what a body declares: `.reg .b64 %rd<40>` (and %rd0..%rd39), `.reg .b64 %SP`,
// `.local .b8 depot[16]`, and labels.
std::map<std::string, std::string> declared_names(std::string_view body,
                                                  const std::vector<Statement> &stmts) {
  static const std::regex reg(R"((%[A-Za-z_$][\w$]*)(?:<(\d+)>)?)");
  static const std::regex local(R"(([A-Za-z_$][\w$]*)\s*(?:\[|;|=))");
  std::map<std::string, std::string> out;
  auto add = [&](const std::string &name) {
    bool sigil = name[0] == '%' || name[0] == '$';
    out[name] = (sigil ? name.substr(0, 1) : "") + kSite + (sigil ? name.substr(1) : name);
  };
  for (const Statement &s : stmts) {
    std::string text(body.substr(s.begin, s.end - s.begin));
    if (s.is_label) {
      add(text.substr(0, text.find(':')));
    } else if (s.opcode == ".reg") {
      for (std::sregex_iterator it(text.begin(), text.end(), reg), end; it != end; ++it) {
        add((*it)[1]);
        if ((*it)[2].matched)
          for (int i = 0, n = std::stoi((*it)[2]); i < n; ++i)
            add((*it)[1].str() + std::to_string(i));
      }
    } else if (s.opcode == ".local" || s.opcode == ".shared") {
      std::smatch m;
      if (std::regex_search(text, m, local))
        add(m[1]);
    }
  }
  return out;
}

} // namespace

Result<InlineFunction> prepare_inline(std::string_view function) {
  auto items = scan_top_level(function);
  if (!items || items->size() != 1 || !(*items)[0].is_function || !(*items)[0].body_open)
    return make_error("not one function with a body");
  const TopItem &fn = (*items)[0];
  InlineFunction f;
  static const std::regex param(R"(\.param\s+\.\w+\s+([A-Za-z_$][\w$]*))");
  std::string head(function.substr(fn.begin, fn.body_open - fn.begin));
  size_t name_at = head.find(fn.name);
  for (std::sregex_iterator it(head.begin(), head.end(), param), end; it != end; ++it)
    (size_t(it->position()) < name_at ? f.retval : f.params.emplace_back()) = (*it)[1];

  auto stmts = scan_body(function, fn.body_open, fn.body_close);
  if (!stmts)
    return Error{stmts.error()};
  std::string_view body = function.substr(0, fn.body_close);
  auto renames = declared_names(body, *stmts);

  // Rewrites, each over one statement, in order; the text between statements stays.
  std::string out;
  size_t copied = fn.body_open + 1;
  auto rewrite = [&](const Statement &s, const std::string &text) {
    out += rename_tokens(body.substr(copied, s.begin - copied), renames) + text;
    copied = s.end;
  };
  for (const Statement &s : *stmts) {
    std::string text(body.substr(s.begin, s.end - s.begin));
    if (s.opcode.rfind("ld.param.", 0) == 0) {
      for (size_t k = 0; k < f.params.size(); ++k)
        if (has_token(text, f.params[k])) {
          size_t dst = text.find_first_not_of(" \t", text.find(s.opcode) + s.opcode.size());
          size_t comma = text.find(',', dst);
          rewrite(s, s.predicate + (s.predicate.empty() ? "" : " ") + "mov" +
                         s.opcode.substr(8) + " " +
                         rename_tokens(text.substr(dst, comma - dst), renames) + ", " + kArg +
                         std::to_string(k) + ";");
        }
    } else if (s.opcode.rfind("st.param.", 0) == 0 && !f.retval.empty() &&
               has_token(text, f.retval)) {
      rewrite(s, "// (return value)");
    } else if (s.opcode == "ret" || s.opcode == "ret.uni") {
      rewrite(s, s.predicate + (s.predicate.empty() ? "" : " ") + "bra " + kDone + ";");
    }
  }
  out += rename_tokens(body.substr(copied), renames);
  f.body = std::move(out);
  return f;
}

std::string inline_call(const InlineFunction &f, const std::vector<std::string> &args,
                        const std::string &prefix, const std::string &predicate) {
  std::string body = f.body;
  for (size_t k = f.params.size(); k-- > 0;) // GPUBTARG10 before GPUBTARG1
    replace_all(body, kArg + std::to_string(k), k < args.size() ? args[k] : "0");
  std::string skip;
  if (!predicate.empty())
    skip = "\t" + negate_predicate(predicate) + " bra " + kDone + ";\n";
  std::string block = "\t{\n" + skip + body + "\n" + kDone + ":\n\t}";
  replace_all(block, kSite, prefix);
  return block;
}

std::string negate_predicate(const std::string &predicate) {
  return predicate[1] == '!' ? "@" + predicate.substr(2) : "@!" + predicate.substr(1);
}

} // namespace gpubt::runtime::ptx
