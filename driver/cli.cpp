// The gpubt command: options, then list, compile-and-emit, or compile-and-trace.
#include "driver/cli.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "codegen/bpf/lower_bpf.h"
#include "driver/compile.h"
#include "driver/options.h"
#include "driver/trace.h"
#include "frontend/ast_dump.h"
#include "runtime/bpf/list_probes.h"
#include "runtime/gpu/list_gpu_probes.h"

namespace gpubt::driver {

static int emit(const Compiled &c, EmitStage stage, std::ostream &out) {
  switch (stage) {
  case EmitStage::Ast:
    out << frontend::dump_ast(*c.program);
    break;
  case EmitStage::Llvm:
    out << c.bpf->llvm_ir;
    break;
  case EmitStage::Bpf:
    out.write(reinterpret_cast<const char *>(c.bpf->object.data()),
              static_cast<std::streamsize>(c.bpf->object.size()));
    break;
  case EmitStage::Ptx:
    out << c.bpf->spec.device.ptx;
    break;
  case EmitStage::None:
    break;
  }
  out.flush();
  return 0;
}

int run_cli(int argc, char **argv) {
  auto parsed = parse_options(argc, argv);
  if (!parsed) {
    if (!parsed.error().empty())
      std::fprintf(stderr, "ERROR: %s\n", parsed.error().c_str());
    print_usage(stderr);
    return 1;
  }
  Options &o = *parsed;
  if (o.help) {
    print_usage(stdout);
    return 0;
  }
  if (o.version) {
    std::puts("gpubt v0.1.0");
    return 0;
  }

  std::ofstream file_out;
  if (!o.output_path.empty()) {
    file_out.open(o.output_path, std::ios::out | std::ios::trunc);
    if (!file_out) {
      std::fprintf(stderr, "ERROR: failed to open output file '%s'\n", o.output_path.c_str());
      return 1;
    }
  }
  std::ostream &out = o.output_path.empty() ? std::cout : file_out;

  if (o.list) {
    auto st = runtime::is_gpu_pattern(o.list_pattern)
                  ? runtime::list_gpu_probes({o.list_pattern, o.child_command, o.pid, o.gpu_arch,
                                              o.verbose},
                                             out)
                  : runtime::list_probes(o.list_pattern, out, o.pid);
    if (!st) {
      std::cerr << "ERROR: " << st.error() << "\n";
      return 1;
    }
    return 0;
  }

  auto compiled = compile(o, std::cerr);
  if (!compiled)
    return 1;
  if (o.emit != EmitStage::None)
    return emit(*compiled, o.emit, out);
  if (o.dry_run)
    return 0;
  return trace(compiled->bpf->spec, o, out, std::cerr);
}

} // namespace gpubt::driver
