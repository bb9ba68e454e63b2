// Dispatchers as PTX text: the calling convention of the patch functions (two .b64 params, a
// .b32 result), one call per probe in probe order.
#include "runtime/gpu/gpu_dispatch.h"

#include <sstream>

namespace gpubt::runtime {
namespace {

std::string dispatcher(const std::string &name, const std::vector<std::string> &callees) {
  std::ostringstream o;
  o << "\n.visible .func (.param .b32 func_retval0) " << name << "(\n\t.param .b64 " << name
    << "_param_0,\n\t.param .b64 " << name << "_param_1\n)\n{\n"
    << "\t.reg .b32 \t%r<2>;\n\t.reg .b64 \t%rd<3>;\n"
    << "\tld.param.u64 \t%rd1, [" << name << "_param_0];\n"
    << "\tld.param.u64 \t%rd2, [" << name << "_param_1];\n";
  for (const auto &callee : callees)
    o << "\t{\n\t.param .b64 param0;\n\tst.param.b64 \t[param0], %rd1;\n"
      << "\t.param .b64 param1;\n\tst.param.b64 \t[param1], %rd2;\n"
      << "\t.param .b32 retval0;\n\tcall (retval0), " << callee << ", (param0, param1);\n\t}\n";
  o << "\tmov.u32 \t%r1, 0;\n\tst.param.b32 \t[func_retval0], %r1;\n\tret;\n}\n";
  return o.str();
}

} // namespace

std::string add_dispatchers(const std::string &ptx, std::vector<abi::DeviceProbeSpec> &probes) {
  std::string out = ptx;
  for (bool exit : {false, true}) {
    std::vector<std::string> callees;
    for (const auto &p : probes)
      if (p.exit == exit)
        callees.push_back(p.function);
    if (callees.size() < 2)
      continue;
    std::string name = exit ? "gpubt_dispatch_exit" : "gpubt_dispatch_enter";
    out += dispatcher(name, callees);
    for (auto &p : probes)
      if (p.exit == exit)
        p.function = name;
  }
  return out;
}

} // namespace gpubt::runtime
