// A PTX text scanner for the instrumenter: top-level items (directives, variables, functions
// with their bodies) and the statements of a body, as offsets into the text; comments and
// strings skipped.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/abi/result.h"

namespace gpubt::runtime::ptx {

struct TopItem {
  size_t begin = 0, end = 0;      // [begin, end) of the whole item in the text
  std::vector<std::string> words; // leading directive words up to the name (.visible, .entry..)
  std::string name;               // function or variable name; empty for header directives
  bool is_function = false;       // .entry or .func
  bool is_entry = false;
  size_t body_open = 0;  // offset of the body's '{' (0 when it has none: a declaration)
  size_t body_close = 0; // offset of its matching '}'
};

Result<std::vector<TopItem>> scan_top_level(std::string_view text);

struct Statement {
  size_t begin = 0, end = 0; // [begin, end): from its first character through ';'
  int depth = 1;             // 1: directly in the function body
  bool is_label = false;     // `name:` (end is past the ':')
  bool is_block = false;     // a nested block's '{' or '}'
  std::string opcode;        // first word after the predicate: "ret", "ld.param.u64", ".reg", ...
  std::string predicate;     // "@%p1", "@!%p2" or empty
};

// The statements between a body's braces (exclusive), nested blocks included.
Result<std::vector<Statement>> scan_body(std::string_view text, size_t open, size_t close);

// Offset past whitespace and comments from AT.
size_t skip_trivia(std::string_view text, size_t at);

// TEXT with each identifier token (outside comments and strings) found in RENAMES replaced.
std::string rename_tokens(std::string_view text, const std::map<std::string, std::string> &renames);

// True when the identifier occurs as a whole token in TEXT outside comments and strings.
bool has_token(std::string_view text, std::string_view name);

} // namespace gpubt::runtime::ptx
