// The gpubt command: options, then list, compile-and-emit, or compile-and-trace.
#include "driver/cli.h"

#include <cstdio>
#include <iostream>
#include <optional>

#include "codegen/bpf/lower_bpf.h"
#include "driver/agent_command.h"
#include "driver/bpftrace_flags.h"
#include "driver/compile.h"
#include "driver/exit_codes.h"
#include "driver/options.h"
#include "driver/output_file.h"
#include "driver/output_setup.h"
#include "driver/trace.h"
#include "frontend/ast_dump.h"
#include "frontend/nearest_name.h"
#include "runtime/bpf/list_probes.h"
#include "runtime/gpu/list_gpu_probes.h"
#include "runtime/process/fd_limit.h"
#include "stdlib/api_types.h"

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

// A --dry-run that compiled: which script, how many probes of each side, nothing attached.
static void report_dry_run(const Options &o, const Compiled &c, std::ostream &err) {
  size_t host = 0, gpu = 0;
  for (const auto &probe : c.program->probes) {
    if (probe->hidden) // added by a pass (launch_call's uprobe): not the script's
      continue;
    for (const auto &ap : probe->attach_points)
      (frontend::is_gpu(ap.provider) || ap.provider == frontend::Provider::GpuLaunch ? gpu : host) +=
          1;
  }
  auto n = [](size_t k, const char *what) {
    return std::to_string(k) + " " + what + (k == 1 ? "" : "s");
  };
  err << "gpubt: " << (o.program_name == "stdin" ? "the program" : o.program_name)
      << " compiled: " << n(host, "host probe") << ", " << n(gpu, "gpu probe")
      << "; nothing attached (--dry-run)\n";
}

int run_cli(int argc, char **argv) {
  if (argc >= 2 && std::string(argv[1]) == "agent")
    return run_agent_command(argc, argv, stdout);
  auto parsed = parse_options(argc, argv);
  if (!parsed) {
    // A bad option or value is one line and where to read more (bpftrace prints the whole
    // usage after getopt's line, burying it); no program at all gets the usage, as bpftrace's.
    const std::string &error = parsed.error();
    if (!error.empty())
      std::fprintf(stderr, "ERROR: %s\n", error.c_str());
    if (error.empty() || error == kNoProgramError)
      print_usage(stderr);
    else
      // One usage line: bpftrace's own suites (0.17 and head) look for "USAGE:" here.
      std::fputs("USAGE: gpubt [options] filename | -e 'program'; gpubt --help lists the "
                 "options\n", stderr);
    return ExitUserError;
  }
  Options &o = *parsed;
  runtime::raise_fd_limit(); // a descriptor per probe and map
  if (o.help) {
    print_usage(stdout);
    return 0;
  }
  if (o.version) {
    std::printf("gpubt %s\n", kVersion);
    return 0;
  }
  if (o.bt.info) {
    print_info(stdout);
    return 0;
  }
  apply_buffering(o.bt.buffering);
  WarningFilter no_warnings(std::cerr);
  std::ostream &err = o.bt.no_warnings ? no_warnings.stream() : std::cerr;
  if (o.bt.debug && o.emit == EmitStage::None) // bpftrace's -d: a dry run that shows the AST
    o.emit = EmitStage::Ast;

  if (!o.output_path.empty() && !o.list && o.program_name != "stdin" &&
      same_file(o.output_path, o.program_name)) {
    std::fprintf(stderr, "ERROR: output file '%s' is the script itself\n", o.output_path.c_str());
    return ExitUserError;
  }
  // -o FILE is truncated only once the script has compiled: a typo must not cost the file.
  std::optional<Compiled> compiled;
  if (!o.list) {
    compiled = compile(o, err);
    if (!compiled)
      return ExitUserError;
    o.print_maps_on_exit = compiled->config.print_maps_on_exit.value_or(true);
    if (o.dry_run && o.emit == EmitStage::None) {
      if (!o.bt.quiet)
        report_dry_run(o, *compiled, err);
      return ExitOk;
    }
  }
  auto file = OutputFile::open(o.output_path);
  if (!file) {
    std::fprintf(stderr, "ERROR: %s\n", file.error().c_str());
    return ExitUserError;
  }
  std::ostream &out = (*file)->stream();
  int status = ExitOk;
  if (o.list) {
    // -lv: what args.NAME (and a uretprobe's retval) are in a probe of a catalogued API call.
    runtime::ApiArgLines catalog_args = [](const std::string &type, const std::string &target,
                                           const std::string &func) {
      frontend::AttachPoint ap;
      ap.provider = type == "uretprobe" ? frontend::Provider::Uretprobe : frontend::Provider::Uprobe;
      ap.target = target;
      ap.func = func;
      return stdlib::api_listing_lines(ap);
    };
    auto st = runtime::is_gpu_pattern(o.list_pattern)
                  ? runtime::list_gpu_probes({o.list_pattern, o.child_command, o.pid, o.gpu_arch,
                                              o.verbose, &std::cerr},
                                             out)
                  : runtime::list_probes(o.list_pattern, out, o.pid, o.verbose, catalog_args,
                                         frontend::did_you_mean);
    if (!st) {
      std::cerr << "ERROR: " << st.error() << "\n";
      status = ExitUserError;
    }
  } else if (o.emit != EmitStage::None) {
    status = emit(*compiled, o.emit, out);
  } else {
    status = trace(compiled->bpf->spec, o, out, err);
  }
  if (auto failed = (*file)->write_error()) {
    std::fprintf(stderr, "ERROR: %s\n", failed->c_str());
    return status != ExitOk ? status : ExitTraceFailed;
  }
  return status;
}

} // namespace gpubt::driver
