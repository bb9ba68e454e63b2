// PTX scanning, just deep enough to find functions, bodies, labels and instructions robustly.
#include "runtime/ptx/ptx_scan.h"

#include <cctype>

namespace gpubt::runtime::ptx {

namespace {

bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%' ||
         c == '.';
}

// Past a string literal starting at AT (a '"'); npos when unterminated.
size_t skip_string(std::string_view t, size_t at) {
  for (size_t i = at + 1; i < t.size(); ++i) {
    if (t[i] == '\\')
      ++i;
    else if (t[i] == '"')
      return i + 1;
  }
  return std::string_view::npos;
}

// Past the comments, blanks or string at AT; AT itself when code starts there; npos for an
// unterminated string.
size_t skip_noncode(std::string_view t, size_t at) {
  size_t j = skip_trivia(t, at);
  if (j != at || j >= t.size() || t[j] != '"')
    return j;
  return skip_string(t, j);
}

size_t skip_line(std::string_view t, size_t at) {
  size_t nl = t.find('\n', at);
  return nl == std::string_view::npos ? t.size() : nl + 1;
}

size_t read_word(std::string_view t, size_t at) {
  while (at < t.size() && ident_char(t[at]))
    ++at;
  return at;
}

Error fail(std::string_view t, size_t at, const std::string &what) {
  size_t line = 1;
  for (size_t i = 0; i < at && i < t.size(); ++i)
    line += t[i] == '\n';
  return make_error("PTX line " + std::to_string(line) + ": " + what);
}

// Past the bracket matching the one at AT ('(' or '{'), skipping comments and strings.
size_t skip_group(std::string_view t, size_t at, std::string &error) {
  char open = t[at], close = open == '(' ? ')' : '}';
  int depth = 0;
  for (size_t i = at; i < t.size();) {
    size_t j = skip_noncode(t, i);
    if (j == std::string_view::npos)
      break;
    if (j != i) {
      i = j;
      continue;
    }
    if (t[i] == open)
      ++depth;
    else if (t[i] == close && --depth == 0)
      return i + 1;
    ++i;
  }
  error = std::string("unbalanced '") + open + "'";
  return std::string_view::npos;
}

// Directives that end at the end of their line, with no ';'.
bool line_directive(std::string_view w) {
  return w == ".version" || w == ".target" || w == ".address_size" || w == ".file" || w == ".loc";
}

} // namespace

size_t skip_trivia(std::string_view t, size_t at) {
  while (at < t.size()) {
    // Not std::isspace: its locale lookup was 30% of scanning a large library's PTX (-l gpu:).
    if (char c = t[at]; c == ' ' || (c >= '\t' && c <= '\r')) {
      ++at;
    } else if (t.compare(at, 2, "//") == 0) {
      at = skip_line(t, at);
    } else if (t.compare(at, 2, "/*") == 0) {
      size_t e = t.find("*/", at + 2);
      at = e == std::string_view::npos ? t.size() : e + 2;
    } else {
      break;
    }
  }
  return at;
}

Result<std::vector<TopItem>> scan_top_level(std::string_view t) {
  std::vector<TopItem> items;
  size_t at = skip_trivia(t, 0);
  while (at < t.size()) {
    TopItem item;
    item.begin = at;
    size_t word_end = read_word(t, at);
    if (word_end > at && line_directive(t.substr(at, word_end - at))) {
      item.words.emplace_back(t.substr(at, word_end - at));
      item.end = skip_line(t, at);
      items.push_back(item);
      at = skip_trivia(t, item.end);
      continue;
    }
    // Words, groups and initializers up to ';' or a body.
    bool after_func = false;
    size_t i = at;
    for (;;) {
      i = skip_trivia(t, i);
      if (i >= t.size())
        return fail(t, item.begin, "unterminated top-level statement");
      char c = t[i];
      if (c == ';') {
        item.end = i + 1;
        break;
      }
      if (c == '"') {
        i = skip_string(t, i);
        if (i == std::string_view::npos)
          return fail(t, item.begin, "unterminated string");
        continue;
      }
      if (c == '{') {
        std::string error;
        size_t close = skip_group(t, i, error);
        if (close == std::string_view::npos)
          return fail(t, i, error);
        if (item.is_function) {
          item.body_open = i;
          item.body_close = close - 1;
          item.end = close;
          break;
        }
        i = close; // an initializer `= { ... }` or a .section's contents
        if (item.words.size() && item.words[0] == ".section") {
          item.end = close;
          break;
        }
        continue;
      }
      if (c == '(') {
        std::string error;
        size_t close = skip_group(t, i, error);
        if (close == std::string_view::npos)
          return fail(t, i, error);
        i = close;
        continue;
      }
      size_t e = read_word(t, i);
      if (e == i) {
        if (c == '[' || c == '=' || c == '<')
          after_func = true; // past a variable's name
        ++i;
        continue;
      }
      std::string w(t.substr(i, e - i));
      if (item.name.empty() && !after_func) {
        if (w == ".entry" || w == ".func") {
          item.is_function = true;
          item.is_entry = w == ".entry";
          item.words.push_back(w);
        } else if (w[0] == '.' || std::isdigit(static_cast<unsigned char>(w[0]))) {
          item.words.push_back(w);
        } else {
          item.name = w;
        }
      }
      i = e;
    }
    items.push_back(item);
    at = skip_trivia(t, item.end);
  }
  return items;
}

Result<std::vector<Statement>> scan_body(std::string_view t, size_t open, size_t close) {
  std::vector<Statement> out;
  int depth = 1;
  size_t i = open + 1;
  while ((i = skip_trivia(t, i)) < close) {
    Statement s;
    s.begin = i;
    if (t[i] == '{' || t[i] == '}') {
      s.is_block = true;
      s.depth = depth;
      depth += t[i] == '{' ? 1 : -1;
      if (depth < 1)
        return fail(t, i, "unbalanced '}' in a function body");
      s.end = ++i;
      out.push_back(s);
      continue;
    }
    s.depth = depth;
    size_t w = i;
    if (t[w] == '@') {
      size_t p = w + 1 + (w + 1 < close && t[w + 1] == '!');
      size_t e = read_word(t, p);
      s.predicate = std::string(t.substr(w, e - w));
      w = skip_trivia(t, e);
    }
    size_t e = read_word(t, w);
    s.opcode = std::string(t.substr(w, e - w));
    if (s.predicate.empty() && e > w && e < close && t[e] == ':') {
      s.is_label = true;
      s.end = e + 1;
      out.push_back(s);
      i = s.end;
      continue;
    }
    if (s.opcode == ".loc" || s.opcode == ".file") {
      s.end = std::min(skip_line(t, i), close);
      out.push_back(s);
      i = s.end;
      continue;
    }
    for (i = e; i < close && t[i] != ';';) {
      size_t j = skip_noncode(t, i);
      if (j == std::string_view::npos || j > close)
        return fail(t, s.begin, "unterminated string or comment");
      i = j == i ? i + 1 : j;
    }
    if (i >= close)
      return fail(t, s.begin, "statement without ';'");
    s.end = ++i;
    out.push_back(s);
  }
  if (depth != 1)
    return fail(t, close, "unbalanced '{' in a function body");
  return out;
}

namespace {

// Calls FN(begin, end) for each identifier token outside comments and strings.
template <class Fn> void for_each_token(std::string_view t, Fn fn) {
  for (size_t i = 0; i < t.size();) {
    size_t j = skip_noncode(t, i);
    if (j == std::string_view::npos)
      return;
    if (j != i) {
      i = j;
      continue;
    }
    size_t e = read_word(t, i);
    if (e == i) {
      ++i;
      continue;
    }
    fn(i, e);
    i = e;
  }
}

} // namespace

std::string rename_tokens(std::string_view t, const std::map<std::string, std::string> &renames) {
  std::string out;
  size_t copied = 0;
  for_each_token(t, [&](size_t b, size_t e) {
    auto it = renames.find(std::string(t.substr(b, e - b)));
    if (it == renames.end())
      return;
    out.append(t.substr(copied, b - copied));
    out += it->second;
    copied = e;
  });
  out.append(t.substr(copied));
  return out;
}

bool has_token(std::string_view t, std::string_view name) {
  bool found = false;
  for_each_token(t, [&](size_t b, size_t e) { found |= t.substr(b, e - b) == name; });
  return found;
}

} // namespace gpubt::runtime::ptx
