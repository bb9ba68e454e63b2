// docs/reference.md's tables of probe types, builtins and functions, made from the compiler's
// own tables (stdlib's builtin and function rows, frontend's providers) and, for gpu probes,
// from compiling a use of each through the real PTX (CUDA) and SPIR-V (Vulkan) targets: the
// page cannot say a builtin works in a Vulkan shader unless the SPIR-V target compiles it.
// bpftrace 0.17's names that gpubt lacks are marked. A change of the tables fails this test,
// which prints the page's new text; GPUBT_UPDATE_REFERENCE=1 writes it into docs/reference.md.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "stdlib/builtins.h"
#include "stdlib/functions.h"
#include "targets/spirv/spirv_target.h"
#include "tests/targets/ptx_support.h"

namespace gpubt::targets::testing {
namespace {

using frontend::Provider;

constexpr const char *kBegin = "<!-- generated: tests/targets/reference_table_test.cpp -->";
constexpr const char *kEnd = "<!-- end of generated tables -->";

// bpftrace 0.17's probe types, builtins and functions (its man page, bpftrace(8)).
const std::vector<std::string> kBpftraceProbeTypes = {
    "BEGIN",  "END",     "kprobe",   "kretprobe", "uprobe",     "uretprobe",  "tracepoint",
    "usdt",   "profile", "interval", "software",  "hardware",   "watchpoint", "asyncwatchpoint",
    "kfunc",  "kretfunc", "iter",    "rawtracepoint"};
const std::vector<std::string> kBpftraceBuiltins = {
    "pid",    "tid",   "uid",     "gid",    "nsecs", "elapsed", "numaid", "cpu",   "comm",
    "kstack", "ustack", "arg0",   "sarg0",  "retval", "func",   "probe",  "curtask", "rand",
    "cgroup", "cpid",  "args",    "username", "ctx"};
const std::vector<std::string> kBpftraceFunctions = {
    "count",  "sum",    "avg",      "min",     "max",       "stats",    "hist",    "lhist",
    "delete", "clear",  "zero",     "print",   "printf",    "time",     "join",    "str",
    "buf",    "ksym",   "usym",     "kaddr",   "uaddr",     "reg",      "system",  "exit",
    "cgroupid", "ntop", "pton",     "kstack",  "ustack",    "cat",      "signal",  "strncmp",
    "strcontains", "override", "sizeof", "strftime", "path", "uptr",   "kptr",    "macaddr",
    "cgroup_path", "bswap", "skboutput", "strerror", "unwatch"};

// A use of function NAME in a probe body; every function needs one (a new row fails here).
const std::map<std::string, std::string> kFunctionUses = {
    {"count", "@f = count();"},        {"sum", "@f = sum(1);"},
    {"avg", "@f = avg(1);"},           {"min", "@f = min(1);"},
    {"max", "@f = max(1);"},           {"stats", "@f = stats(1);"},
    {"hist", "@f = hist(1);"},         {"lhist", "@f = lhist(1, 0, 10, 1);"},
    {"printf", "printf(\"%d\\n\", 1);"}, {"system", "system(\"true\");"},
    {"cat", "cat(\"/proc/self/stat\");"}, {"print", "@m = 1; print(@m);"},
    {"clear", "@m[1] = 1; clear(@m);"}, {"delete", "@m[1] = 1; delete(@m[1]);"},
    {"has_key", "@m[1] = 1; @f = has_key(@m, 1);"}, {"len", "@m[1] = 1; @f = len(@m);"},
    {"strlen", "@f = strlen(\"ab\");"}, {"signal_name", "@f[signal_name(1)] = count();"}, {"errorf", "errorf(\"%d\", 1);"},
    {"warnf", "warnf(\"%d\", 1);"}, {"debugf", "debugf(\"%d\", 1);"},
    {"tseries", "@f = tseries(1, 1s, 5);"},
    {"zero", "@m[1] = 1; zero(@m);"},  {"exit", "exit();"},
    {"time", "time();"},               {"str", "@f = str(0);"},
    {"kname", "@f[kname(0)] = count();"}, {"deref", "@f = deref(0);"},
    {"reg", "@f = reg(\"sp\");"},      {"uptr", "@f = uptr(0);"},
    {"kptr", "@f = kptr(0);"},         {"bswap", "@f = bswap(1);"},
    {"popcount", "@f = popcount(3);"},
    {"strncmp", "@f = strncmp(\"a\", \"b\", 1);"}, {"strftime", "@f[strftime(\"%H\", 1)] = count();"},
    {"sizeof", "@f = sizeof(1);"},     {"buf", "@f[buf(\"ab\", 2)] = count();"},
    {"ntop", "@f[ntop(1)] = count();"}, {"usym", "@f[usym(0)] = count();"},
    {"ustack", "@f[ustack(3)] = count();"}, {"kstack", "@f[kstack(3)] = count();"},
    {"join", "join(0);"},               {"uaddr", "@f = uaddr(\"main\");"},
    {"cgroupid", "@f = cgroupid(\"/sys/fs/cgroup\");"}, {"macaddr", "@f[macaddr(0)] = count();"},
    {"pton", "@f = pton(\"127.0.0.1\");"}, {"strerror", "@f[strerror(1)] = count();"},
    {"signal", "signal(\"KILL\");"},   {"ksym", "@f[ksym(0)] = count();"},
    {"kaddr", "@f = kaddr(\"jiffies\");"}, {"path", "@f[path(0)] = count();"},
    {"percpu_kaddr", "@f = percpu_kaddr(\"runqueues\");"},
    {"override", "override(0);"},      {"strcontains", "@f = strcontains(\"a\", \"b\");"},
    {"cgroup_path", "@f[cgroup_path(1)] = count();"}, {"skboutput", "skboutput(\"f\", 0, 1, 0);"},
    {"unwatch", "unwatch(0);"},
    {"nccl_rank", "@f = nccl_rank(0);"}, {"nccl_nranks", "@f = nccl_nranks(0);"},
    {"nccl_comm_id", "@f = nccl_comm_id(0);"}, {"nccl_seq", "@f = nccl_seq(0);"},
    {"nccl_nested", "@f = nccl_nested(0);"},
};

std::string builtin_use(std::string_view name) {
  if (name == "args")
    return "@f = args.n;";
  if (name == "arg")
    return "@f = arg0;";
  if (name == "sarg")
    return "@f = sarg0;";
  return "@f[" + std::string(name) + "] = count();";
}

// Where BODY compiles on TARGET: "kprobe, kretprobe, block_begin, block_end, mem, barrier" (gpu:),
// or "-".
std::string gpu_where(const codegen::DeviceTarget &target, const std::string &body) {
  std::string out;
  for (const char *type : {"kprobe", "kretprobe", "block_begin", "block_end", "mem", "barrier"}) {
    auto c = compile_device_script(std::string("gpu:") + type + ":k { " + body + " }", target);
    if (c.error.empty())
      out += std::string(out.empty() ? "" : ", ") + type;
  }
  return out.empty() ? "-" : out;
}

const std::vector<Provider> kHostProviders = {
    Provider::Begin,   Provider::End,       Provider::Interval,   Provider::Uprobe,
    Provider::Uretprobe, Provider::Tracepoint, Provider::Kprobe,  Provider::Kretprobe,
    Provider::Profile, Provider::Usdt,      Provider::Software,   Provider::Hardware,
    Provider::Watchpoint, Provider::AsyncWatchpoint};

std::string host_where(const stdlib::BuiltinInfo &b) {
  std::string out;
  size_t n = 0;
  for (Provider p : kHostProviders)
    if (stdlib::builtin_allowed(b, p)) {
      out += std::string(out.empty() ? "" : ", ") + std::string(stdlib::provider_type_name(p));
      ++n;
    }
  out = n == kHostProviders.size() ? "all" : out;
  if (stdlib::builtin_allowed(b, Provider::GpuHang)) // run on the host, for a launch
    out += std::string(out.empty() ? "" : ", ") + "gpu:hang";
  if (stdlib::builtin_allowed(b, Provider::GpuLaunch)) // a launch-level gpu:kretprobe
    out += std::string(out.empty() ? "" : ", ") + "gpu:kretprobe per launch";
  return out.empty() ? "-" : out;
}

struct Targets {
  std::unique_ptr<codegen::DeviceTarget> ptx = make_ptx_target({});
  std::unique_ptr<codegen::DeviceTarget> spirv = make_spirv_target(SpirvFlavour::Vulkan);
};

std::string generate(const Targets &t) {
  std::ostringstream md;
  md << kBegin << "\n\n## Probe types\n\n| probe type | gpubt | runs |\n|---|---|---|\n";
  std::set<std::string> ours;
  for (Provider p : kHostProviders)
    ours.insert(std::string(stdlib::provider_type_name(p)));
  for (Provider p : kHostProviders)
    md << "| `" << stdlib::provider_type_name(p) << "` | yes | host |\n";
  md << "| `gpu:kprobe` | yes | GPU (CUDA, Vulkan): every thread as the kernel starts |\n"
     << "| `gpu:kretprobe` | yes | GPU (CUDA, Vulkan): every thread as it exits |\n"
     << "| `gpu:block_begin` | yes | GPU (CUDA, Vulkan): once per block, its first thread in |\n"
     << "| `gpu:block_end` | yes | GPU (CUDA, Vulkan): once per block, its last thread out |\n"
     << "| `gpu:hang` | yes | host (gpubt), once per CUDA launch that has run its duration |\n"
     << "| `gpu:mem`, `gpu:load`, `gpu:store`, `gpu:atomic` | yes | GPU (CUDA): every thread at "
        "each memory access (`gpu:load[:SPACE]:KERNEL`, SPACE global, shared or local) |\n"
     << "| `gpu:barrier` | yes | GPU (CUDA): every thread at each block-wide barrier |\n";
  for (const auto &p : kBpftraceProbeTypes)
    if (!ours.count(p))
      md << "| `" << p << "` | **not in gpubt** (bpftrace has it) | - |\n";

  md << "\n## Builtins\n\n"
     << "| builtin | host probes | gpu probes, CUDA | gpu probes, Vulkan |\n|---|---|---|---|\n";
  std::set<std::string> names;
  for (const auto &n : stdlib::builtin_names()) {
    auto use = stdlib::find_builtin(n);
    std::string name(use.info->name);
    if (!names.insert(name).second)
      continue;
    std::string shown = name == "arg" ? "arg0..arg9" : name == "sarg" ? "sarg0..sarg9" : name;
    std::string body = builtin_use(name);
    md << "| `" << shown << "` | " << host_where(*use.info) << " | " << gpu_where(*t.ptx, body)
       << " | " << gpu_where(*t.spirv, body) << " |\n";
  }
  for (const auto &b : kBpftraceBuiltins)
    if (!stdlib::find_builtin(b).info)
      md << "| `" << b << "` | **not in gpubt** (bpftrace has it) | - | - |\n";

  md << "\n## Functions\n\n"
     << "| function | host probes | gpu probes, CUDA | gpu probes, Vulkan |\n|---|---|---|---|\n";
  auto fnames = stdlib::function_names();
  std::sort(fnames.begin(), fnames.end());
  for (const auto &n : fnames) {
    const auto *f = stdlib::find_function(n);
    auto use = kFunctionUses.find(n);
    EXPECT_NE(use, kFunctionUses.end()) << "add a use of " << n << " to kFunctionUses";
    if (use == kFunctionUses.end())
      continue;
    md << "| `" << n << "()` | " << ((f->contexts & stdlib::kHostContext) ? "all" : "-")
       << " | " << gpu_where(*t.ptx, use->second) << " | " << gpu_where(*t.spirv, use->second)
       << " |\n";
  }
  for (const auto &f : kBpftraceFunctions)
    if (!stdlib::find_function(f))
      md << "| `" << f << "()` | **not in gpubt** (bpftrace has it) | - | - |\n";
  md << "\n" << kEnd << "\n";
  return md.str();
}

TEST(ReferenceTable, DocsMatchTheCompilersTables) {
  Targets t;
  ASSERT_TRUE(t.ptx && t.spirv) << "the PTX and SPIR-V back ends are both needed";
  std::string want = generate(t);
  std::string path = std::string(GPUBT_SOURCE_DIR) + "/docs/reference.md";
  std::ifstream in(path);
  std::string page((std::istreambuf_iterator<char>(in)), {});
  size_t b = page.find(kBegin), e = page.find(kEnd);
  ASSERT_TRUE(b != std::string::npos && e != std::string::npos) << path << " lacks its markers";
  std::string have = page.substr(b, e + std::string(kEnd).size() + 1 - b);
  if (have != want && std::getenv("GPUBT_UPDATE_REFERENCE")) {
    page.replace(b, have.size(), want);
    std::ofstream(path) << page;
    return;
  }
  EXPECT_EQ(have, want) << "docs/reference.md is out of date: rerun with "
                           "GPUBT_UPDATE_REFERENCE=1 to rewrite it";
}

} // namespace
} // namespace gpubt::targets::testing
