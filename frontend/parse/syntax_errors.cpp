// Maps ANTLR's error state to bison's message for the same script. bison lists at most four
// expected tokens, and after a complete expression lists only the tokens that close it
// (its default reductions have dropped the operators): we filter ANTLR's set the same way.
#include "frontend/parse/syntax_errors.h"

#include <algorithm>
#include <string_view>

#include "GpubtParser.h"

namespace gpubt::frontend::parse {
namespace {

using P = gpubt_parse::GpubtParser;

struct TokenWord {
  size_t type;
  std::string_view word;
  bool listed; // may appear in "expecting ..."; operators never do
};

// In bison's token order, which is the order of its "expecting A or B" lists.
const TokenWord kWords[] = {
    {antlr4::Token::EOF, "end of file", true},
    {P::COLON, ":", true},
    {P::SEMI, ";", true},
    {P::LBRACE, "{", true},
    {P::RBRACE, "}", true},
    {P::LBRACKET, "[", false},
    {P::RBRACKET, "]", true},
    {P::LPAREN, "(", true},
    {P::RPAREN, ")", true},
    {P::QUES, "?", false},
    {P::ENDPRED, "end predicate", true},
    {P::COMMA, "\",\"", true},
    {P::PARAMCOUNT, "$#", true},
    {P::ASSIGN, "=", false},
    {P::EQ, "==", false},
    {P::NE, "!=", false},
    {P::LE, "<=", false},
    {P::GE, ">=", false},
    {P::LEFT, "<<", false},
    {P::RIGHT, ">>", false},
    {P::LT, "<", false},
    {P::GT, ">", false},
    {P::RANGLE, ">", true},
    {P::LAND, "&&", false},
    {P::LOR, "||", false},
    {P::PLUS, "+", false},
    {P::INCREMENT, "++", false},
    {P::LEFTASSIGN, "<<=", false},
    {P::RIGHTASSIGN, ">>=", false},
    {P::PLUSASSIGN, "+=", false},
    {P::MINUSASSIGN, "-=", false},
    {P::MULASSIGN, "*=", false},
    {P::DIVASSIGN, "/=", false},
    {P::MODASSIGN, "%=", false},
    {P::BANDASSIGN, "&=", false},
    {P::BORASSIGN, "|=", false},
    {P::BXORASSIGN, "^=", false},
    {P::MINUS, "-", false},
    {P::DECREMENT, "--", false},
    {P::MUL, "*", false},
    {P::DIV, "/", false},
    {P::MOD, "%", false},
    {P::BAND, "&", false},
    {P::BOR, "|", false},
    {P::BXOR, "^", false},
    {P::LNOT, "!", false},
    {P::BNOT, "~", false},
    {P::DOT, ".", false},
    {P::PTR, "->", false},
    {P::IF, "if", true},
    {P::ELSE, "else", true},
    {P::IDENT, "identifier", true},
    {P::INT_TYPE, "identifier", true},
    {P::ATTACH, "identifier", true},
    {P::STRING, "string", true},
    {P::MAP, "map", true},
    {P::VAR, "variable", true},
    {P::PARAM, "positional parameter", true},
    {P::INT, "integer", true},
};

// bpftrace 0.17's lexer gives these identifiers their own token kinds.
const struct {
  std::string_view word;
  std::initializer_list<std::string_view> names;
} kIdentKinds[] = {
    {"builtin", {"arg0",    "arg1",    "arg2",  "arg3",   "arg4",  "arg5",   "arg6",    "arg7",
                 "arg8",    "arg9",    "args",  "cgroup", "comm",  "cpid",   "cpu",     "ctx",
                 "curtask", "elapsed", "func",  "gid",    "nsecs", "numaid", "pid",     "probe",
                 "rand",    "retval",  "sarg0", "sarg1",  "sarg2", "sarg3",  "sarg4",   "sarg5",
                 "sarg6",   "sarg7",   "sarg8", "sarg9",  "tid",   "uid",    "username"}},
    {"call_builtin", {"kstack", "ustack"}},
    {"call",
     {"avg",       "buf",    "bswap",   "cat",         "cgroup_path", "cgroupid", "clear",
      "count",     "delete", "exit",    "hist",        "join",        "kaddr",    "kptr",
      "ksym",      "lhist",  "macaddr", "max",         "min",         "ntop",     "override",
      "path",      "print",  "printf",  "pton",        "reg",         "signal",   "sizeof",
      "skboutput", "stats",  "str",     "strcontains", "strftime",    "strncmp",  "sum",
      "system",    "time",   "uaddr",   "unwatch",     "uptr",        "usym",     "zero"}},
    {"stack_mode", {"bpftrace", "perf", "raw"}},
    {"unroll", {"unroll"}},
    {"while", {"while"}},
    {"return", {"return"}},
    {"break", {"break"}},
    {"continue", {"continue"}},
    {"struct", {"struct"}},
    {"union", {"union"}},
    {"for", {"for"}},
};

std::string_view text_of(const antlr4::Token *t, const std::string &source) {
  size_t start = t->getStartIndex(), stop = t->getStopIndex();
  if (t->getType() == antlr4::Token::EOF || start > stop || stop >= source.size())
    return {};
  return std::string_view(source).substr(start, stop - start + 1);
}

std::string printable(char c) {
  if (c >= 0x20 && c < 0x7f)
    return std::string(1, c);
  static const char hex[] = "0123456789abcdef";
  return std::string("\\x") + hex[(c >> 4) & 0xf] + hex[c & 0xf];
}

std::string expecting(const antlr4::misc::IntervalSet &expected) {
  if (expected.contains(size_t(P::INT))) // an operand was expected: bison lists too many to print
    return "";
  std::vector<std::string_view> words;
  for (const auto &w : kWords)
    if (w.listed && expected.contains(w.type) &&
        std::find(words.begin(), words.end(), w.word) == words.end())
      words.push_back(w.word);
  if (words.empty() || words.size() > 4)
    return "";
  std::string out = ", expecting ";
  for (size_t i = 0; i < words.size(); ++i)
    out += std::string(i ? " or " : "") + std::string(words[i]);
  return out;
}

bool in_angle_body(antlr4::ParserRuleContext *ctx) {
  for (; ctx; ctx = dynamic_cast<antlr4::ParserRuleContext *>(ctx->parent))
    if (auto *b = dynamic_cast<P::BodyContext *>(ctx))
      return b->LT() != nullptr;
  return false;
}

} // namespace

SourceSpan token_span(const antlr4::Token *t) {
  SourceSpan s;
  s.line = s.end_line = uint32_t(t->getLine());
  s.col = uint32_t(t->getCharPositionInLine()) + 1;
  size_t len = t->getType() == antlr4::Token::EOF ? 0 : t->getStopIndex() - t->getStartIndex() + 1;
  s.end_col = s.col + uint32_t(len);
  return s;
}

SourceSpan bison_span(antlr4::BufferedTokenStream &tokens, const antlr4::Token *t) {
  SourceSpan s = token_span(t);
  size_t i = t->getTokenIndex();
  while (i > 0) {
    antlr4::Token *prev = tokens.get(i - 1);
    if (prev->getChannel() != antlr4::Token::DEFAULT_CHANNEL || prev->getLine() != t->getLine())
      break;
    s.col = uint32_t(prev->getCharPositionInLine()) + 1;
    --i;
  }
  return s;
}

std::string token_word(const antlr4::Token *t, const std::string &source) {
  size_t type = t->getType();
  if (type == P::IDENT) {
    std::string_view text = text_of(t, source);
    for (const auto &kind : kIdentKinds)
      if (std::find(kind.names.begin(), kind.names.end(), text) != kind.names.end())
        return std::string(kind.word);
  }
  for (const auto &w : kWords)
    if (w.type == type)
      return std::string(w.word);
  return std::string(text_of(t, source));
}

void FirstErrorStrategy::reportError(antlr4::Parser *parser,
                                     const antlr4::RecognitionException &e) {
  if (reported_)
    return;
  reported_ = true;
  antlr4::Token *t = e.getOffendingToken() ? e.getOffendingToken() : parser->getCurrentToken();
  SourceSpan span = bison_span(tokens_, t);
  size_t type = t->getType();
  if (type == P::INVALID) {
    diags_.error(span, "invalid character '" + printable(source_[t->getStartIndex()]) + "'");
    return;
  }
  if (type == P::UNTERMINATED_STRING) {
    diags_.error(span, "unterminated string");
    return;
  }
  auto *ctx = parser->getContext();
  size_t rule = ctx ? ctx->getRuleIndex() : size_t(P::RuleProgram);
  std::string unexpected = "syntax error, unexpected " + token_word(t, source_);
  if (rule == P::RuleProgram || rule == P::RuleImportedScript || rule == P::RuleProbe) {
    if (type == antlr4::Token::EOF) {
      // bison's own words, pointing at the probe's attach points (none in an empty script).
      SourceSpan probe;
      if (rule == P::RuleProbe && ctx->getStart()->getType() != antlr4::Token::EOF) {
        size_t last = t->getTokenIndex();
        while (last > 0 && tokens_.get(--last)->getChannel() != antlr4::Token::DEFAULT_CHANNEL) {
        }
        probe = SourceSpan::merge(token_span(ctx->getStart()), token_span(tokens_.get(last)));
      }
      diags_.error(probe, "unexpected end of file, expected {");
    } else if ((rule == P::RuleProgram || rule == P::RuleImportedScript) && type == P::LBRACE) {
      diags_.error(span, "No attach points for probe");
    } else {
      std::string hint;
      size_t i = t->getTokenIndex();
      while (i > 0 && tokens_.get(--i)->getChannel() != antlr4::Token::DEFAULT_CHANNEL) {
      }
      if (i < t->getTokenIndex() && tokens_.get(i)->getType() == P::RANGLE)
        hint = " (a `>` outside parentheses ends a `< >` block: write comparisons there as "
               "($a > $b))";
      diags_.error(span, unexpected + ", expecting {" + hint);
    }
    return;
  }
  if (rule == P::RuleStmts) {
    diags_.error(span, unexpected + ", expecting " + (in_angle_body(ctx) ? ">" : "}"));
    return;
  }
  diags_.error(span, unexpected + expecting(e.getExpectedTokens()));
}

void FirstErrorStrategy::recover(antlr4::Parser *, std::exception_ptr) {
  throw antlr4::ParseCancellationException();
}

antlr4::Token *FirstErrorStrategy::recoverInline(antlr4::Parser *parser) {
  throw antlr4::InputMismatchException(parser);
}

// DefaultErrorStrategy::sync without its single-token deletion: an unexpected token at the
// start of a block or loop is reported with the block's whole expected set.
void FirstErrorStrategy::sync(antlr4::Parser *parser) {
  const antlr4::atn::ATN &atn = parser->getATN();
  antlr4::atn::ATNState *s = atn.states[parser->getState()];
  size_t la = parser->getTokenStream()->LA(1);
  antlr4::misc::IntervalSet next = atn.nextTokens(s);
  if (next.contains(antlr4::Token::EPSILON) || next.contains(la))
    return;
  switch (s->getStateType()) {
  case antlr4::atn::ATNState::BLOCK_START:
  case antlr4::atn::ATNState::STAR_BLOCK_START:
  case antlr4::atn::ATNState::PLUS_BLOCK_START:
  case antlr4::atn::ATNState::STAR_LOOP_ENTRY:
  case antlr4::atn::ATNState::PLUS_LOOP_BACK:
  case antlr4::atn::ATNState::STAR_LOOP_BACK:
    throw antlr4::InputMismatchException(parser);
  default:
    break;
  }
}

} // namespace gpubt::frontend::parse
