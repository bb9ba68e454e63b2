// The compile half of the pipeline: script text -> AST -> typed AST -> layout -> BPF artifacts
// (and the device image in their spec).
#pragma once
#include <memory>
#include <optional>
#include <ostream>

#include "codegen/bpf/lower_bpf.h"
#include "driver/options.h"
#include "frontend/ast.h"
#include "frontend/diagnostics.h"
#include "frontend/passes/check_declarations.h"
#include "frontend/passes/semantic_info.h"
#include "frontend/source.h"

namespace gpubt::driver {

struct Compiled {
  std::unique_ptr<frontend::Program> program;
  frontend::SemanticInfo sema;
  std::optional<codegen::bpf::BpfArtifacts> bpf; // absent when stopped at --emit=ast
  frontend::ScriptConfig config;                  // the script's `config = { ... }`
};

// Runs the passes in order and stops after the first that reports errors; diagnostics go to
// `err` rendered as bpftrace does. Returns nullopt on errors.
std::optional<Compiled> compile(const Options &options, std::ostream &err);

} // namespace gpubt::driver
