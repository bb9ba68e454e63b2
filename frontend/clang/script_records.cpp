// Record names by a regex over the definitions' text (clang has not read them yet: these
// decide what it is given) and by the casts and sizeofs of the probes.
#include "frontend/clang/script_records.h"

#include <regex>

#include "frontend/ast_walk.h"

namespace gpubt::frontend {

namespace {

// The struct/union names a script's definitions use (DEFINED false) or define with a body.
std::set<std::string> definition_records(const Program &program, bool defined) {
  std::set<std::string> out;
  static const std::regex ref(R"(\b(struct|union)\s+([A-Za-z_]\w*)(\s*\{)?)");
  for (const auto &d : program.c_definitions)
    for (std::sregex_iterator it(d.text.begin(), d.text.end(), ref), end; it != end; ++it)
      if ((*it)[3].matched == defined)
        out.insert((*it)[1].str() + " " + (*it)[2].str());
  return out;
}

} // namespace

std::set<std::string> defined_records(const Program &program) {
  return definition_records(program, true);
}

std::set<std::string> used_records(const Program &program) {
  std::set<std::string> used = definition_records(program, false);
  for (const auto &probe : program.probes)
    for_each_expr(*probe, [&](const Expr &e) {
      const std::string *name = e.kind == ExprKind::Cast ? &e.as<CastExpr>().to.name
                                : e.kind == ExprKind::SizeofType
                                    ? &e.as<SizeofTypeExpr>().of.name
                                    : nullptr;
      if (name && (name->rfind("struct ", 0) == 0 || name->rfind("union ", 0) == 0))
        used.insert(*name);
    });
  return used;
}

} // namespace gpubt::frontend
