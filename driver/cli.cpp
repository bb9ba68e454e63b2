// The gpubt command: options, then list, compile-and-emit, or compile-and-trace.
#include "driver/cli.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "codegen/bpf/lower_bpf.h"
#include "driver/bpftrace_flags.h"
#include "driver/compile.h"
#include "driver/output_setup.h"
#include "driver/options.h"
#include "driver/trace.h"
#include "frontend/ast_dump.h"
#include "runtime/bpf/list_probes.h"

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
  if (o.bt.info) {
    print_info(stdout);
    return 0;
  }
  apply_buffering(o.bt.buffering);
  WarningFilter no_warnings(std::cerr);
  std::ostream &err = o.bt.no_warnings ? no_warnings.stream() : std::cerr;

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
    auto st = runtime::list_probes(o.list_pattern, out, o.pid);
    if (!st) {
      std::cerr << "ERROR: " << st.error() << "\n";
      return 1;
    }
    return 0;
  }

  auto compiled = compile(o, err);
  if (!compiled)
    return 1;
  if (o.emit != EmitStage::None)
    return emit(*compiled, o.emit, out);
  if (o.bt.debug) // bpftrace's -d: a dry run that shows the program as parsed
    return emit(*compiled, EmitStage::Ast, out);
  if (o.dry_run)
    return 0;
  return trace(compiled->bpf->spec, o, out, err);
}

} // namespace gpubt::driver
