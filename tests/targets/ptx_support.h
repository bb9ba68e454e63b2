// Test support for the device back end: script -> typed AST -> ProgramSpec with PTX, and the
// real ptxas assembling it as a Compute Sanitizer patch (CUDA's ptxas, skipped where absent).
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "codegen/bpf/lower_bpf.h"
#include "codegen/device/lower_device.h"
#include "codegen/layout/program_layout.h"
#include "targets/ptx/ptx_target.h"
#include "tests/support/checked_script.h"

namespace gpubt::targets::testing {

constexpr const char *kPtxas = "/usr/local/cuda/bin/ptxas";

struct DeviceCompiled {
  std::string error; // diagnostics or the lowering's error; empty on success
  abi::ProgramSpec spec;
};

struct HostOptions {
  bool check_sharing = true; // false: as if the driver skipped check_map_sharing
  codegen::bpf::BpfCodegenOptions bpf;
  codegen::layout::LayoutOptions layout;
};

// SCRIPT through the layout pass and the host lowering, then its gpu probes through TARGET.
inline DeviceCompiled compile_device_script(const std::string &script,
                                            const codegen::DeviceTarget &target,
                                            codegen::device::DeviceCodegenOptions opts = {},
                                            const HostOptions &host = {}) {
  DeviceCompiled out;
  auto checked = gpubt::testing::check_script(script, {}, host.check_sharing);
  if (!checked.error.empty()) {
    out.error = checked.error;
    return out;
  }
  const frontend::Program &prog = *checked.prog;
  const frontend::SemanticInfo &sema = checked.sema;
  auto layout = codegen::layout::lay_out_program(prog, sema, host.layout);
  if (!layout) {
    out.error = layout.error();
    return out;
  }
  auto art = codegen::bpf::lower_to_bpf(prog, sema, *layout, host.bpf);
  if (!art) {
    out.error = art.error();
    return out;
  }
  out.spec = std::move(art->spec);
  if (auto st = codegen::device::lower_device_probes(prog, sema, *layout, target, opts, out.spec);
      !st)
    out.error = st.error();
  return out;
}

// One function of a PTX module, from its `.func` line through its closing brace.
inline std::string function_text(const std::string &ptx, const std::string &name) {
  size_t b = ptx.find(".func  (.param .b32 func_retval0) " + name + "(");
  size_t e = ptx.find("\n}\n", b);
  return b == std::string::npos || e == std::string::npos ? "" : ptx.substr(b, e + 3 - b);
}

inline size_t count_of(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1))
    ++n;
  return n;
}

inline DeviceCompiled compile_gpu_script(const std::string &script,
                                         codegen::device::DeviceCodegenOptions opts = {},
                                         const HostOptions &host = {}) {
  auto target = make_ptx_target({});
  if (!target)
    return {"no NVPTX target", {}};
  return compile_device_script(script, *target, opts, host);
}

inline bool have_ptxas() { return access(kPtxas, X_OK) == 0; }

// Runs ptxas -arch=sm_90 --compile-as-tools-patch on PTX; returns its exit status and output.
inline int run_ptxas(const std::string &ptx, std::string *output) {
  char dir[] = "/tmp/gpubt-ptx-XXXXXX";
  if (!mkdtemp(dir))
    return -1;
  std::string in = std::string(dir) + "/probe.ptx", log = std::string(dir) + "/log";
  std::ofstream(in) << ptx;
  std::string cmd = std::string(kPtxas) + " -arch=sm_90 --compile-as-tools-patch -o " + dir +
                    "/probe.cubin " + in + " > " + log + " 2>&1";
  int st = std::system(cmd.c_str());
  std::ifstream l(log);
  output->assign(std::istreambuf_iterator<char>(l), {});
  std::system(("rm -rf " + std::string(dir)).c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

} // namespace gpubt::targets::testing
