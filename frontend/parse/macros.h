// Hygienic macros, as bpftrace has them since 0.23: `macro NAME(x, $v, @m) { stmts; value }`.
// The builder expands a call by building the macro's body again where it is called (as unroll
// builds its block again), with what this class says about each name while it does:
//  * `x`  an expression parameter: the argument's parse tree, built again at each use in the
//         caller's names (so its side effects happen at each use, as in bpftrace);
//  * `$v` a variable parameter: the caller's variable itself (the macro may assign it);
//  * `@m` a map parameter: the caller's map;
//  * any other `$name` of the body is the expansion's own (renamed `$name$N`, a name no script
//    can write), so a macro never touches its caller's variables by accident.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "GpubtParser.h"
#include "frontend/source.h"

namespace gpubt::frontend::parse {

class MacroExpansions {
public:
  struct Frame {
    gpubt_parse::GpubtParser::MacroDefContext *def = nullptr;
    std::map<std::string, gpubt_parse::GpubtParser::ExprContext *> exprs;
    std::map<std::string, std::string> vars, maps; // parameter -> the caller's name
    size_t caller = 0;                             // frames below this one: the caller's
    int id = 0;
    SourceSpan at; // the call being expanded
  };
  struct Argument {
    gpubt_parse::GpubtParser::ExprContext *expr;
    size_t caller;
  };

  // Restores the frames it changed when it goes out of scope.
  class Scope {
  public:
    Scope(MacroExpansions &m, std::vector<Frame> saved) : m_(m), saved_(std::move(saved)) {}
    Scope(const Scope &) = delete;
    ~Scope() { m_.frames_ = std::move(saved_); }

  private:
    MacroExpansions &m_;
    std::vector<Frame> saved_;
  };

  // Builds the body of FRAME's macro until the returned scope ends.
  [[nodiscard]] Scope enter(Frame frame) {
    std::vector<Frame> saved = frames_;
    frame.caller = frames_.size();
    frame.id = ++expansions_;
    frames_.push_back(std::move(frame));
    return Scope(*this, std::move(saved));
  }
  // Builds ARG in the names of the code that called the macro, until the scope ends.
  [[nodiscard]] Scope enter_caller(const Argument &arg) {
    std::vector<Frame> saved = frames_;
    frames_.resize(arg.caller);
    return Scope(*this, std::move(saved));
  }

  bool active(const gpubt_parse::GpubtParser::MacroDefContext *def) const {
    for (const auto &f : frames_)
      if (f.def == def)
        return true;
    return false;
  }
  std::optional<Argument> argument(const std::string &name) const {
    if (frames_.empty())
      return std::nullopt;
    auto it = frames_.back().exprs.find(name);
    if (it == frames_.back().exprs.end())
      return std::nullopt;
    return Argument{it->second, frames_.back().caller};
  }
  std::string variable(const std::string &name) const {
    if (frames_.empty())
      return name;
    const Frame &f = frames_.back();
    auto it = f.vars.find(name);
    return it != f.vars.end() ? it->second : name + "$" + std::to_string(f.id);
  }
  // The calls of the macros being expanded where code is built now, innermost first.
  std::vector<SourceSpan> call_sites() const {
    std::vector<SourceSpan> sites;
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
      sites.push_back(it->at);
    return sites;
  }
  std::string map(const std::string &name) const {
    if (frames_.empty())
      return name;
    auto it = frames_.back().maps.find(name);
    return it != frames_.back().maps.end() ? it->second : name;
  }

private:
  std::vector<Frame> frames_;
  int expansions_ = 0;
};

} // namespace gpubt::frontend::parse
