// Inlining works on the function's own statements: its declared registers, locals and labels get
// a per-site prefix (so copies never clash with the kernel or each other), parameter loads become
// moves from the arguments, the return value's store goes, and `ret` becomes a branch to the end.
#include "runtime/ptx/ptx_inline.h"

#include <cctype>
#include <map>

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

// No std::regex here: this runs inside the traced program, and the agent's statically linked
// libstdc++ regex crashed there (SIGSEGV compiling a `\w` class in PyTorch and JAX processes on
// the H100; the program's own libstdc++ had interposed part of it).
bool ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}
bool ident_char(char c) { return ident_start(c) || std::isdigit(static_cast<unsigned char>(c)); }

// The end of the identifier (or run of identifier characters) starting at AT.
size_t run_end(std::string_view s, size_t at) {
  while (at < s.size() && ident_char(s[at]))
    ++at;
  return at;
}

size_t skip_space(std::string_view s, size_t at) {
  while (at < s.size() && std::isspace(static_cast<unsigned char>(s[at])))
    ++at;
  return at;
}

// The name a `.local`/`.shared` statement declares: its first identifier followed by `[`, `;`
// or `=` (`.local .align 8 .b8 __local_depot0[16];`); "" when none is.
std::string declared_variable(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    if (!ident_char(text[at])) {
      ++at;
      continue;
    }
    size_t end = run_end(text, at);
    size_t after = skip_space(text, end);
    if (ident_start(text[at]) && after < text.size() &&
        (text[after] == '[' || text[after] == ';' || text[after] == '='))
      return std::string(text.substr(at, end - at));
    at = end;
  }
  return "";
}

// Each `.param .TYPE NAME` of a function's head, with NAME's offset.
std::vector<std::pair<size_t, std::string>> declared_params(std::string_view head) {
  std::vector<std::pair<size_t, std::string>> out;
  for (size_t at = head.find(".param"); at != std::string_view::npos;
       at = head.find(".param", at + 1)) {
    size_t type = skip_space(head, at + 6);
    if (type == at + 6 || type >= head.size() || head[type] != '.')
      continue;
    size_t type_end = run_end(head, type + 1);
    size_t name = skip_space(head, type_end);
    if (type_end == type + 1 || name == type_end || name >= head.size() || !ident_start(head[name]))
      continue;
    out.emplace_back(name, std::string(head.substr(name, run_end(head, name) - name)));
  }
  return out;
}

// Renames for what a body declares: `.reg .b64 %rd<40>` (and %rd0..%rd39), `.reg .b64 %SP`,
// `.local .b8 depot[16]`, and labels.
std::map<std::string, std::string> declared_names(std::string_view body,
                                                  const std::vector<Statement> &stmts) {
  std::map<std::string, std::string> out;
  auto add = [&](const std::string &name) {
    bool sigil = name[0] == '%' || name[0] == '$';
    out[name] = (sigil ? name.substr(0, 1) : "") + kSite + (sigil ? name.substr(1) : name);
  };
  for (const Statement &s : stmts) {
    std::string_view text = body.substr(s.begin, s.end - s.begin);
    if (s.is_label) {
      add(std::string(text.substr(0, text.find(':'))));
    } else if (s.opcode == ".reg") {
      for (const auto &[name, count] : declared_registers(text)) {
        add(name);
        for (int i = 0; i < count; ++i)
          add(name + std::to_string(i));
      }
    } else if (s.opcode == ".local" || s.opcode == ".shared") {
      if (std::string name = declared_variable(text); !name.empty())
        add(name);
    }
  }
  return out;
}

} // namespace

std::vector<std::pair<std::string, int>> declared_registers(std::string_view text) {
  std::vector<std::pair<std::string, int>> out;
  for (size_t at = text.find('%'); at != std::string_view::npos; at = text.find('%', at)) {
    size_t end = at + 1 < text.size() && ident_start(text[at + 1]) ? run_end(text, at + 1) : at + 1;
    if (end == at + 1) {
      at = end;
      continue;
    }
    int count = 0;
    size_t next = end;
    if (end < text.size() && text[end] == '<') {
      size_t digits = end + 1;
      while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])))
        ++digits;
      if (digits > end + 1 && digits < text.size() && text[digits] == '>') {
        count = std::stoi(std::string(text.substr(end + 1, digits - end - 1)));
        next = digits + 1;
      }
    }
    out.emplace_back(std::string(text.substr(at, end - at)), count);
    at = next;
  }
  return out;
}

Result<InlineFunction> prepare_inline(std::string_view function) {
  auto items = scan_top_level(function);
  if (!items || items->size() != 1 || !(*items)[0].is_function || !(*items)[0].body_open)
    return make_error("not one function with a body");
  const TopItem &fn = (*items)[0];
  InlineFunction f;
  std::string_view head = function.substr(fn.begin, fn.body_open - fn.begin);
  size_t name_at = head.find(fn.name);
  for (auto &[at, name] : declared_params(head))
    (at < name_at ? f.retval : f.params.emplace_back()) = name;

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
          rewrite(s, s.predicate + (s.predicate.empty() ? "" : " ") + "mov" + s.opcode.substr(8) +
                         " " + rename_tokens(text.substr(dst, comma - dst), renames) + ", " + kArg +
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
