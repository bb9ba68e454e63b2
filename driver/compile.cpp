// Parse, resolve, check, lower: the stages in order, each one's output the next one's input.
#include "driver/compile.h"
#include "driver/attach_point_lookup.h"
#include "driver/config_fields.h"
#include "driver/semantic_hooks.h"
#include "driver/usdt_sites.h"

#include "frontend/clang/read_c_definitions.h"
#include <algorithm>
#include <bpf/libbpf.h>
#include <cstdlib>
#include <ctime>
#include <iostream>

#include "frontend/ast_walk.h"
#include "frontend/parse/parse.h"
#include "frontend/passes/check_attach_points.h"
#include "frontend/passes/check_types.h"
#include "frontend/passes/diagnostic_calls.h"
#include "frontend/passes/launch_call_uprobe.h"
#include "frontend/passes/launch_state.h"
#include "frontend/passes/map_sharing.h"
#include "frontend/passes/place_launch_probes.h"
#include "frontend/passes/resolve_types.h"
#include "codegen/device/lower_device.h"
#include "codegen/layout/program_layout.h"
#include "targets/ptx/ptx_target.h"
#include "targets/spirv/spirv_target.h"
#include "driver/program_types.h"
#include "runtime/gpu/cuda/gpu_attach.h"

namespace gpubt::driver {

// --no-warnings: the errors alone, in order.
// CLOCK_REALTIME - CLOCK_BOOTTIME now: tseries() adds it to the BPF boot clock to stamp its
// intervals with the time of day, as bpftrace's sw_tai clock does.
static uint64_t wall_clock_offset_ns() {
  timespec real{}, boot{};
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_BOOTTIME, &boot);
  auto ns = [](const timespec &t) { return uint64_t(t.tv_sec) * 1000000000ull + uint64_t(t.tv_nsec); };
  return ns(real) - ns(boot);
}

static frontend::Diagnostics without_warnings(const frontend::Diagnostics &all) {
  frontend::Diagnostics errors;
  for (const auto &d : all.all())
    if (d.severity == frontend::Severity::Error)
      errors.error(d.span, d.message);
  return errors;
}

// The same probes for Vulkan compute shaders. Lowered into a copy of the spec: the probes,
// formats and probe names it adds are those the PTX lowering added (one lowering, two targets),
// only the image is kept. A probe the Vulkan flavour cannot express leaves Vulkan shaders
// untraced, said under -v; CUDA kernels are traced all the same.
// COPY is the spec as it was before the PTX lowering.
static void add_vulkan_image(const Compiled &c, const Options &options,
                             const codegen::layout::ProgramLayout &layout,
                             const codegen::device::DeviceCodegenOptions &device_opts,
                             abi::ProgramSpec copy, abi::ProgramSpec &spec) {
  auto target = targets::make_spirv_target(targets::SpirvFlavour::Vulkan);
  if (!target)
    return;
  auto opts = device_opts;
  opts.warnings = nullptr; // the PTX lowering said them
  auto st = codegen::device::lower_device_probes(*c.program, c.sema, layout, *target, opts, copy);
  if (!st) {
    if (options.verbose)
      std::cerr << "gpubt: gpu probes will not run in Vulkan shaders: " << st.error() << "\n";
    return;
  }
  for (auto &image : copy.device.images)
    spec.device.images.push_back(std::move(image));
}

// gpu probes -> patch functions in PTX, into spec.device.
static Status compile_device(const Compiled &c, const Options &options,
                             const codegen::layout::ProgramLayout &layout, abi::ProgramSpec &spec,
                             std::ostream &err) {
  if (!codegen::layout::has_gpu_probes(*c.program))
    return Ok{};
  codegen::TargetOptions target_opts;
  auto target = targets::make_ptx_target(target_opts);
  if (!target)
    return make_error("gpu probes need LLVM's NVPTX back end, which this gpubt was built without");
  spec.device.arch = target_opts.arch;
  codegen::device::DeviceCodegenOptions device_opts;
  std::vector<std::string> warnings;
  device_opts.warnings = &warnings;
  abi::ProgramSpec before = spec;
  auto st =
      codegen::device::lower_device_probes(*c.program, c.sema, layout, *target, device_opts, spec);
  for (const auto &w : warnings)
    if (!options.bt.no_warnings)
      err << "WARNING: " << w << "\n";
  if (!st)
    return st;
  add_vulkan_image(c, options, layout, device_opts, std::move(before), spec);
  return Ok{};
}

// A job whose agent is in timing mode (-p PID) runs no probe in its kernels: each gpu probe that
// stays there, and each gpu:hang (it needs the Compute Sanitizer's launch callbacks), is an error.
static void refuse_kernel_probes(const frontend::Program &program,
                                 const std::vector<frontend::ProbePlacement> &placements, pid_t pid,
                                 frontend::Diagnostics &diags) {
  std::string agent = "process " + std::to_string(pid) + "'s agent is in timing mode (" +
                      abi::kAgentModeVar + "=" + abi::kTimingMode + "): ";
  for (const auto &p : placements)
    if (!p.per_launch)
      diags.error(p.where, agent + "it runs no probe in the kernels, and " + p.probe +
                               " must run there: " + p.why + " (start the job without " +
                               abi::kAgentModeVar + " for such probes)");
  for (const auto &probe : program.probes)
    for (const auto &ap : probe->attach_points)
      if (ap.provider == frontend::Provider::GpuHang)
        diags.error(ap.span, agent + ap.name() + " watches launches with the Compute Sanitizer, "
                                                 "which that agent does not load");
}

std::optional<Compiled> compile(const Options &options, std::ostream &err) {
  frontend::SourceFile file(options.program_name, options.program_text);
  frontend::Diagnostics diags;
  auto report = [&] {
    if (options.bt.no_warnings)
      without_warnings(diags).render(err, file);
    else
      diags.render(err, file);
    return diags.has_errors();
  };

  Compiled c;
  c.program = frontend::parse_program(file, diags, options.params);
  if (report() || !c.program)
    return std::nullopt;

  { // its own diagnostics: report() renders all so far, and warnings must print once
    frontend::Diagnostics found;
    c.config = frontend::check_declarations(*c.program, found);
    frontend::check_attach_points(*c.program, attach_point_lookup(options.pid, !options.dry_run),
                                  found);
    (options.bt.no_warnings ? without_warnings(found) : found).render(err, file);
    if (found.has_errors())
      return std::nullopt;
  }

  frontend::CDefinitionOptions c_opts{options.bt.include_dirs, options.bt.include_files};
  c_opts.includes.insert(c_opts.includes.end(), c.program->imported_headers.begin(),
                         c.program->imported_headers.end());
  ProgramTypes program_types;
  gather_program_types(*c.program, options.pid, c_opts, program_types);
  frontend::CTypes c_types = frontend::read_c_definitions(*c.program, file, diags, c_opts);
  if (report())
    return std::nullopt;

  frontend::SemanticOptions sema_opts =
      make_semantic_options(options, program_types, c_types, err);
  sema_opts.config = config_fields(options, c.config);
  c.sema = frontend::resolve_types(*c.program, sema_opts);
  frontend::check_types(*c.program, c.sema, sema_opts, diags);
  if (!diags.has_errors()) {
    frontend::check_map_sharing(*c.program, c.sema, diags);
    frontend::check_launch_state(*c.program, diags);
    frontend::render_diagnostic_calls(*c.program, file, options.bt.no_warnings, c.sema);
  }
  if (report())
    return std::nullopt;
  if (options.emit == EmitStage::Ast)
    return c;
  // After --emit=ast (which shows the script as written) and before the layout: a probe moved
  // to the host has its maps in BPF. GPUBT_LAUNCH_PROBES=device keeps every probe on the GPU:
  // the Vulkan layer times no dispatch, so a Vulkan program's last_thread probes need that.
  // Launches are timed in a process gpubt starts (-c) and in one attached with -p whose agent is
  // in timing mode; any other attached process's agent has had the Compute Sanitizer since its
  // start, which keeps CUPTI out.
  const char *where = std::getenv("GPUBT_LAUNCH_PROBES");
  bool on_device = where && std::string(where) == "device";
  bool timing_agent = options.pid > 0 && runtime::agent_in_timing_mode(options.pid);
  std::string held = on_device ? "GPUBT_LAUNCH_PROBES=device keeps every gpu probe on the GPU"
                     : options.child_command.empty() && !timing_agent
                         ? "not a -c run: an attached process's agent has had the Compute "
                           "Sanitizer since it started, and launches are timed only in a process "
                           "gpubt starts or one whose agent is in timing mode (`gpubt agent env "
                           "--timing`)"
                         : "";
  auto placements = frontend::place_launch_probes(*c.program, held);
  if (options.verbose || options.dry_run)
    for (const auto &placed : placements)
      err << "gpubt: " << frontend::placement_line(placed, file.name()) << "\n";
  if (timing_agent) {
    refuse_kernel_probes(*c.program, placements, options.pid, diags);
    if (report())
      return std::nullopt;
  }
  // launch_call where a probe stays on the GPU: a host map a hidden uprobe writes.
  if (frontend::lower_launch_call_on_device(*c.program, c.sema) &&
      (options.verbose || options.dry_run))
    err << "gpubt: launch_call in gpu probes on the GPU is the time of the process's latest "
           "launch call, from a hidden " << frontend::kLaunchCallProbe
        << " (a CUDA graph's kernels see the latest call before the graph's launch)\n";

  // The layout both back ends start from: maps, their device layouts. The BPF lowering runs
  // first only because the device lowering numbers its probe names after the host's.
  codegen::layout::LayoutOptions layout_opts;
  layout_opts.map_max_entries = static_cast<uint32_t>(options.env.map_keys_max);
  if (c.config.max_map_keys && !std::getenv("BPFTRACE_MAP_KEYS_MAX")) // the environment wins
    layout_opts.map_max_entries = static_cast<uint32_t>(*c.config.max_map_keys);
  layout_opts.device_map_capacity = options.gpu_map_capacity;
  layout_opts.device_key_spread = options.gpu_key_spread;
  auto layout = codegen::layout::lay_out_program(*c.program, c.sema, layout_opts);
  if (!layout) {
    err << file.name() << ": ERROR: " << layout.error() << "\n";
    return std::nullopt;
  }

  codegen::bpf::BpfCodegenOptions cg_opts;
  cg_opts.has_child = sema_opts.has_child;
  cg_opts.timeline = !options.timeline.path.empty();
  cg_opts.helper_error_checks = options.bt.helper_check_level;
  cg_opts.uprobe_arg_index = [&](const frontend::AttachPoint &ap, std::string_view field) {
    return uprobe_arg_index(program_types, c_types, ap, field);
  };
  cg_opts.usdt_sites = make_usdt_site_finder(options);
  cg_opts.traced_program = traced_program(options);
  cg_opts.wall_clock_offset_ns = wall_clock_offset_ns();
  cg_opts.dummy_ts_map = options.env.dummy_ts_map;
  if (int cpus = libbpf_num_possible_cpus(); cpus > 0)
    cg_opts.num_cpus = static_cast<uint32_t>(cpus);
  frontend::Diagnostics backend; // LLVM's errors, at the probes they name
  auto artifacts = codegen::bpf::lower_to_bpf(*c.program, c.sema, *layout, cg_opts, &backend);
  if (!artifacts) {
    if (backend.has_errors())
      backend.render(err, file);
    else
      err << file.name() << ": ERROR: " << artifacts.error() << "\n";
    return std::nullopt;
  }
  c.bpf = std::move(*artifacts);
  c.bpf->spec.launch_calls = std::any_of(placements.begin(), placements.end(),
                                         [](const auto &p) { return p.reads_launch_call; });
  if (auto st = compile_device(c, options, *layout, c.bpf->spec, err); !st) {
    err << file.name() << ": ERROR: " << st.error() << "\n";
    return std::nullopt;
  }
  return c;
}

} // namespace gpubt::driver
