// libgpubt_agent.so: loaded into the traced program through CUDA_INJECTION64_PATH. It puts
// gpubt's probe functions into the modules that hold a matching kernel: compiled into the
// module's PTX as it loads (the PTX backend) or patched into its SASS (the Compute Sanitizer),
// gives each matching kernel its userdata at launch, and writes every context's device maps to
// the results file.
// Any failure leaves the program running uninstrumented, with a "gpubt:" line on stderr.
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <sys/socket.h>
#include <unistd.h>
#include <utility>

#include <cuda.h>
#include <sanitizer.h>

#include "runtime/abi/agent_protocol.h"
#include "runtime/abi/device_abi.h"
#include "runtime/abi/send_all.h"
#include "runtime/cuda_agent/agent_state.h"
#include "runtime/cuda_agent/context_memory.h"
#include "runtime/cuda_agent/driver_api.h"
#include "runtime/cuda_agent/gpu_clock.h"
#include "runtime/cuda_agent/ptx_images.h"
#include "runtime/ptx/cubin_functions.h"
#include "runtime/ptx/kernel_match.h"
#include "runtime/ptx/ptx_instrument.h"

namespace gpubt::agent {

using runtime::ptx::cubin_functions;
using runtime::ptx::cubin_symbols;
using runtime::ptx::kernel_matches;
using runtime::ptx::kernel_names;
using runtime::ptx::KernelNames;
using runtime::ptx::probe_mask;

void say(Agent &a, const std::string &msg) {
  if (!a.attached) // attached, the message goes to gpubt only: not into the program's stderr
    std::fprintf(stderr, "gpubt: %s\n", msg.c_str());
  a.results.messages.push_back(msg);
}

namespace {

// MSG says that kernels the probes matched run without them: counted for gpubt's "partially
// traced" exit status (AgentResults::untraced).
void say_untraced(Agent &a, const std::string &msg) {
  say(a, msg);
  ++a.results.untraced;
}

} // namespace

// Launch callbacks cost every launch of the process about 0.7 us on the H100, traced or not:
// they are turned on only once a module with probe code in it is loaded, so a process whose
// kernels match no probe runs at plain speed.
void enable_launch_callbacks(Agent &a) {
  if (a.launch_callbacks.exchange(true))
    return;
  sanitizerEnableCallback(1, a.subscriber, SANITIZER_CB_DOMAIN_LAUNCH,
                          SANITIZER_CBID_LAUNCH_BEGIN);
  sanitizerEnableCallback(1, a.subscriber, SANITIZER_CB_DOMAIN_GRAPHS,
                          SANITIZER_CBID_GRAPHS_NODE_LAUNCH_BEGIN);
  if (a.config.events_fd >= 0 || a.stream_events || a.watch.active())
    sanitizerEnableCallback(1, a.subscriber, SANITIZER_CB_DOMAIN_LAUNCH,
                            SANITIZER_CBID_LAUNCH_END);
  if (a.watch.active())
    enable_graph_watch(a, true);
}

void enable_graph_watch(Agent &a, bool on) {
  for (auto cbid : {SANITIZER_CBID_GRAPHS_LAUNCH_BEGIN, SANITIZER_CBID_GRAPHS_LAUNCH_END})
    sanitizerEnableCallback(on, a.subscriber, SANITIZER_CB_DOMAIN_GRAPHS, cbid);
}

void disable_launch_callbacks(Agent &a) {
  if (!a.launch_callbacks.exchange(false))
    return;
  sanitizerEnableCallback(0, a.subscriber, SANITIZER_CB_DOMAIN_LAUNCH,
                          SANITIZER_CBID_LAUNCH_BEGIN);
  sanitizerEnableCallback(0, a.subscriber, SANITIZER_CB_DOMAIN_GRAPHS,
                          SANITIZER_CBID_GRAPHS_NODE_LAUNCH_BEGIN);
  sanitizerEnableCallback(0, a.subscriber, SANITIZER_CB_DOMAIN_LAUNCH,
                          SANITIZER_CBID_LAUNCH_END);
  enable_graph_watch(a, false);
}

std::string result_text(SanitizerResult r) {
  const char *s = nullptr;
  sanitizerGetResultString(r, &s);
  return s ? s : "error " + std::to_string(int(r));
}

namespace {

int device_sm(CUdevice dev) {
  auto get = driver_function<CUresult (*)(int *, CUdevice_attribute, CUdevice)>(
      "cuDeviceGetAttribute");
  int major = 0, minor = 0;
  if (!get || get(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) != CUDA_SUCCESS ||
      get(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) != CUDA_SUCCESS)
    return 0;
  return major * 10 + minor;
}

} // namespace

int driver_ptx_isa() {
  auto get = driver_function<CUresult (*)(int *)>("cuDriverGetVersion");
  int version = 0;
  return get && get(&version) == CUDA_SUCCESS ? runtime::ptx_isa_for_cuda(version) : 0;
}

namespace {


// CUDA's profiling interface in the process (the PyTorch profiler, Nsight Systems): while it traces
// kernels, the Compute Sanitizer is told of no launch (seen on the H100), so no probe ran and
// the user must hear why, not only that no launch matched.
bool cupti_loaded() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("/libcupti.so") != std::string::npos)
      return true;
  return false;
}

} // namespace

void say_if_profiled(Agent &a) {
  if (a.config.device.probes.empty())
    return;
  for (const auto &img : a.results.images)
    for (uint64_t n : img.probe_launches)
      if (n)
        return;
  if (cupti_loaded())
    say(a, "CUPTI (libcupti: a profiler such as the PyTorch profiler or Nsight Systems) is loaded "
           "in this process: while it traces kernels, the Compute Sanitizer gpubt's probes use "
           "sees no kernel launch");
}

// One file per process (RESULTS.PID): CUDA programs that start CUDA programs (torchrun's ranks)
// inherit the agent and its config, and gpubt merges every file.
void write_results(Agent &a) {
  if (a.config.results_path.empty())
    return;
  add_loaded_kernels(a, a.results);
  std::string path = a.config.results_path + "." + std::to_string(getpid());
  std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  out << abi::write_agent_results(a.results);
  out.close();
  if (!out || std::rename(tmp.c_str(), path.c_str()) != 0)
    std::fprintf(stderr, "gpubt: cannot write the GPU results to %s\n", path.c_str());
}

void trace_context(Agent &a, CUcontext ctx, const KnownContext &known) {
  int sm = known.sm;
  std::string arch = sm ? "sm_" + std::to_string(sm) : "";
  const abi::AgentCubin *cubin = nullptr;
  for (const auto &c : a.config.cubins)
    if (c.arch == arch || (a.config.cubins.size() == 1 && arch.empty()))
      cubin = &c;
  std::string where = "device " + std::to_string(known.device) + " (" + arch + ")";
  if (!cubin && a.config.device.probes.empty())
    return; // only gpu:hang probes: nothing to load, nothing to say
  if (!cubin)
    return say_untraced(a, "no probe code for " + where + ": its kernels run uninstrumented");
  SanitizerResult r;
  {
    std::lock_guard<std::mutex> lock(a.patch_mu);
    r = cubin->bytes.empty() ? sanitizerAddPatchesFromFile(cubin->path.c_str(), ctx)
                             : sanitizerAddPatches(cubin->bytes.data(), ctx);
  }
  std::string what = cubin->bytes.empty() ? cubin->path : "gpubt's probe code";
  if (r != SANITIZER_SUCCESS)
    return say_untraced(a, "loading " + what + " on " + where + " failed (" + result_text(r) +
                      "): its kernels run uninstrumented");
  auto c = std::make_unique<Context>();
  c->device = known.device;
  c->sm = sm;
  c->launches.assign(a.config.device.probes.size(), 0);
  a.contexts[ctx] = std::move(c);
  if (a.clock)
    a.clock->watch(ctx);
  if (a.config.verbose)
    std::fprintf(stderr, "gpubt: probe code %s loaded on %s\n", what.c_str(), where.c_str());
}

namespace {

void on_context_created(Agent &a, const Sanitizer_ResourceContextData &d) {
  KnownContext known{int(d.device), device_sm(d.device)};
  if (a.control) {
    std::lock_guard<std::mutex> lock(a.known_mu);
    a.known_contexts[d.context] = known;
  }
  if (a.tracing)
    trace_context(a, d.context, known);
  // -c: its copy kernel loaded now, on the copier's thread, while it runs nothing (why:
  // live_copier.cpp kPrepareWait). An attached session's a.live is not this thread's to read
  // (contexts made then get the Sanitizer's copy).
  if (a.live && !a.attached && a.contexts.count(d.context))
    a.live->prepare_soon(d.context);
}

// A module the PTX backend instrumented: its cubin holds an image's userdata array.
const PtxImage *ptx_image_of(Agent &a, const Sanitizer_ResourceModuleData &d) {
  if (!a.images)
    return nullptr;
  auto symbols = cubin_symbols(d.pCubin, d.cubinSize);
  for (const auto &s : symbols ? *symbols : std::vector<std::string>())
    if (s.rfind(kUserdataPrefix, 0) == 0)
      if (const PtxImage *image = a.images->by_symbol(s))
        return image;
  return nullptr;
}

// The device address of IMAGE's userdata array in MODULE (of the current context); 0 if none.
CUdeviceptr userdata_array(CUmodule module, const PtxImage &image) {
  static auto get_global =
      driver_function<CUresult (*)(CUdeviceptr *, size_t *, CUmodule, const char *)>(
          "cuModuleGetGlobal_v2");
  CUdeviceptr address = 0;
  size_t bytes = 0;
  if (!get_global || get_global(&address, &bytes, module, image.symbol.c_str()) != CUDA_SUCCESS ||
      bytes < 8 * image.kernels.size())
    return 0;
  return address;
}

// Points kernel NAMES' slot of a PTX-backend module's userdata array at USERDATA. Looking the
// array up is a driver call, which a graph launch callback must not make (it hangs the launch on
// the H100): there the address must be known from the module's load (on_module_load_call).
bool set_ptx_userdata(Context &c, CUmodule module, const PtxImage &image, const KernelNames &names,
                      void *userdata, bool may_call_driver) {
  size_t slot = 0;
  while (slot < image.kernels.size() && kernel_names(image.kernels[slot]).mangled != names.mangled)
    ++slot;
  if (slot == image.kernels.size())
    return true; // not instrumented: nothing reads a slot
  auto it = c.userdata.find(module);
  if (it == c.userdata.end() && may_call_driver)
    it = c.userdata.emplace(module, userdata_array(module, image)).first;
  return it != c.userdata.end() && it->second &&
         c.memory->store_u64(it->second + 8 * slot, reinterpret_cast<uint64_t>(userdata));
}

// The context's probe memory, made on first need. A failure at a module's load (FINAL false) is
// tried again at the first launch; one there is final: the kernels run uninstrumented.
bool ensure_memory(Agent &a, Context &c, CUcontext ctx, bool final) {
  if (c.memory || c.memory_failed)
    return bool(c.memory);
  // The clock's first measurement is under way since the context was made.
  auto clock = a.clock ? a.clock->model(ctx, std::chrono::milliseconds(20)) : std::nullopt;
  auto memory = ContextMemory::create(ctx, a.config, clock);
  if (memory) {
    c.memory = std::move(*memory);
  } else if (final) {
    c.memory_failed = true;
    say_untraced(a, memory.error() + " on device " + std::to_string(c.device) +
               ": its kernels run uninstrumented");
  }
  return bool(c.memory);
}

// What one kernel of MODULE needs before it runs (setup_kernel): its probe mask and userdata (a
// kernel ctx), and for the PTX backend (IMAGE) that userdata in the module's array.
KernelSetup setup_kernel(Agent &a, Context &c, CUcontext ctx, CUmodule module,
                         const KernelNames &names, const PtxImage *image, bool may_call_driver,
                         bool final) {
  KernelSetup k;
  if (!ensure_memory(a, c, ctx, final))
    return k; // the patches find NULL userdata and return at once
  k.mask = probe_mask(a.config.device.probes, names);
  k.userdata = c.memory->kernel_ctx(names.base, k.mask);
  if (!k.userdata)
    k.error = "cannot set up the probes of kernel " + names.base;
  else if (image && !set_ptx_userdata(c, module, *image, names, k.userdata, may_call_driver))
    k.error = "setting the userdata failed for kernel " + names.base;
  if (!k.error.empty())
    k.mask = 0;
  return k;
}

// The agent's inserter: the Sanitizer instruction kinds a probe point is patched at, each with the
// patch function it calls there (a memory probe: one per space it asks for, PATCH_global...,
// which adds the space to the flags); none for a point the agent cannot insert at.
std::vector<std::pair<Sanitizer_InstructionId, std::string>>
sanitizer_points(const abi::ProbePoint &p, const std::string &patch) {
  switch (p.kind) {
  case abi::ProbePointKind::Entry:
    return {{SANITIZER_INSTRUCTION_BLOCK_ENTER, patch}};
  case abi::ProbePointKind::Exit:
    return {{SANITIZER_INSTRUCTION_BLOCK_EXIT, patch}};
  case abi::ProbePointKind::Barrier:
    return {{SANITIZER_INSTRUCTION_BARRIER, patch}};
  case abi::ProbePointKind::MemoryAccess: {
    std::vector<std::pair<Sanitizer_InstructionId, std::string>> out;
    for (auto [bit, id] : {std::pair{abi::AccessGlobal, SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS},
                           {abi::AccessShared, SANITIZER_INSTRUCTION_SHARED_MEMORY_ACCESS},
                           {abi::AccessLocal, SANITIZER_INSTRUCTION_LOCAL_MEMORY_ACCESS}})
      if (!(p.access & abi::AccessSpaces) || (p.access & bit))
        out.emplace_back(id, abi::memory_space_patch(patch, bit));
    return out;
  }
  default:
    return {};
  }
}

// A module's traced kernels set up as it loads, so that their first launch only looks them up
// (set up there, on the H100, it added ~70 us to that launch's start). Up to kPrepareAtLoad of
// them: a library of thousands of matching kernels would pay for kernels it never launches.
void prepare_kernels(Agent &a, Context &c, CUcontext ctx, CUmodule module,
                     const std::vector<KernelNames> &kernels, const PtxImage *image) {
  constexpr size_t kPrepareAtLoad = 64;
  for (size_t i = 0; i < kernels.size() && i < kPrepareAtLoad; ++i) {
    const KernelNames &names = kernels[i];
    KernelSetup k = setup_kernel(a, c, ctx, module, names, image, true, false);
    if (k.userdata && k.error.empty())
      c.prepared[{module, names.mangled}] = k;
  }
}

} // namespace

void patch_module(Agent &a, CUcontext ctx, CUmodule module, const KnownModule &known,
                  bool from_callback) {
  auto it = a.contexts.find(ctx);
  if (it == a.contexts.end() || it->second->patched.count(module) || it->second->detaching)
    return;
  std::vector<KernelNames> names;
  for (const auto &f : known.functions) {
    names.push_back(kernel_names(f));
    a.loaded_kernels.insert(names.back().base);
  }
  std::vector<const abi::DeviceProbeSpec *> wanted;
  for (const auto &probe : a.config.device.probes) {
    bool matches = !known.readable; // an image we cannot read: patch and let the launch filter
    for (const auto &n : names)
      matches = matches || kernel_matches(probe.kernel, n);
    if (!matches)
      continue;
    if (a.config.backend == abi::GpuBackend::Ptx) {
      say_untraced(a, "a module with kernels for " + probe.name +
                 " was not loaded from PTX gpubt could instrument: its kernels run "
                 "uninstrumented (--gpu-backend=ptx)");
      return;
    }
    wanted.push_back(&probe);
  }
  if (wanted.empty())
    return;
  std::unique_lock<std::mutex> lock(a.patch_mu, std::defer_lock);
  if (!from_callback)
    lock.lock();
  else if (!lock.try_lock()) // gpubt is detaching: the module stays as loaded
    return;
  // All of the module's probes or none: a failure takes back what was registered, so the module
  // runs exactly as loaded.
  std::string failed;
  std::set<std::string> done; // probes sharing a dispatcher patch it once per instruction kind
  for (const auto *probe : wanted) {
    auto points = sanitizer_points(probe->point, probe->patch);
    if (points.empty()) {
      failed = probe->name + ": the CUDA agent cannot patch a probe at " +
               abi::probe_point_name(probe->point.kind);
      break;
    }
    for (const auto &[id, patch] : points) {
      if (!done.insert(std::to_string(id) + "/" + patch).second)
        continue;
      SanitizerResult r = sanitizerPatchInstructions(id, module, patch.c_str());
      if (r != SANITIZER_SUCCESS) {
        failed = probe->name + ": patching " + patch + " failed (" + result_text(r) + ")";
        break;
      }
    }
    if (!failed.empty())
      break;
  }
  if (failed.empty())
    if (SanitizerResult r = sanitizerPatchModule(module); r != SANITIZER_SUCCESS)
      failed = "sanitizerPatchModule failed (" + result_text(r) + ")";
  if (!failed.empty()) {
    SanitizerResult r = sanitizerUnpatchModule(module);
    lock.unlock();
    return say_untraced(a, failed + (r == SANITIZER_SUCCESS
                                ? ": the module was left as loaded, its kernels run uninstrumented"
                                : ": undoing it failed too (" + result_text(r) + ")"));
  }
  lock.unlock();
  it->second->patched.insert(module);
  if (from_callback) // attaching turns them on once every module is patched
    enable_launch_callbacks(a);
  if (!a.attached) // set up at first launch instead: no device memory work off the app's threads
    prepare_kernels(a, *it->second, ctx, module, names, nullptr);
  if (a.config.verbose) {
    std::string kernels;
    size_t listed = 0, matched = 0;
    for (const auto &n : names)
      for (const auto *probe : wanted)
        if (kernel_matches(probe->kernel, n)) {
          if (++matched <= 8)
            kernels += (listed++ ? ", " : "") + n.base;
          break;
        }
    if (matched > listed)
      kernels += " and " + std::to_string(matched - listed) + " more";
    note(a, "patched a module of " + std::to_string(known.functions.size()) +
                " functions (sass)" + (kernels.empty() ? "" : ": " + kernels));
  }
}

namespace {

// What a loaded module holds, read from its cubin in the callback (the image is gone after).
KnownModule read_module(const Sanitizer_ResourceModuleData &d) {
  KnownModule m;
  m.context = d.context;
  auto functions = cubin_functions(d.pCubin, d.cubinSize);
  m.readable = bool(functions);
  if (functions)
    m.functions = std::move(*functions);
  return m;
}

void forget_context(Agent &a, CUcontext ctx) {
  if (!a.control)
    return;
  std::lock_guard<std::mutex> lock(a.known_mu);
  a.known_contexts.erase(ctx);
  std::erase_if(a.known_modules, [&](const auto &m) { return m.second.context == ctx; });
}

void on_module_loaded(Agent &a, const Sanitizer_ResourceModuleData &d, const KnownModule &known) {
  auto it = a.contexts.find(d.context);
  if (it == a.contexts.end())
    return;
  if (const PtxImage *image = ptx_image_of(a, d)) {
    it->second->ptx_modules[d.module] = image;
    return enable_launch_callbacks(a);
  }
  patch_module(a, d.context, d.module, known, true);
}

void on_module_unload(Agent &a, const Sanitizer_ResourceModuleData &d) {
  if (a.control) {
    std::lock_guard<std::mutex> lock(a.known_mu);
    a.known_modules.erase(d.module);
  }
  auto it = a.contexts.find(d.context);
  if (it == a.contexts.end())
    return;
  it->second->patched.erase(d.module);
  it->second->ptx_modules.erase(d.module);
  it->second->userdata.erase(d.module);
  std::erase_if(it->second->prepared, [&](const auto &p) { return p.first.first == d.module; });
  std::erase_if(it->second->callback_data, [&](const auto &f) { return f.second == d.module; });
  // Function handles of the module may be reused by a later module: forget them.
  it->second->masks.clear();
  it->second->kernel_ctxs.clear();
}

void on_launch(Agent &a, const Sanitizer_LaunchData &d, bool from_graph) {
  auto it = a.contexts.find(d.context);
  if (it == a.contexts.end() || it->second->detaching)
    return;
  Context &c = *it->second;
  auto known = c.masks.find(d.function);
  if (known == c.masks.end()) {
    auto ptx = c.ptx_modules.find(d.module);
    bool by_ptx = ptx != c.ptx_modules.end();
    if (!by_ptx && !c.patched.count(d.module))
      return; // uninstrumented module: nothing runs, nothing to set
    KernelNames names = kernel_names(d.functionName ? d.functionName : "");
    auto prepared = c.prepared.find({d.module, names.mangled});
    KernelSetup k = prepared != c.prepared.end()
                        ? prepared->second
                        : setup_kernel(a, c, d.context, d.module, names,
                                       by_ptx ? ptx->second : nullptr, !from_graph, true);
    if (!by_ptx && k.userdata) {
      if (sanitizerSetCallbackData(d.function, k.userdata) == SANITIZER_SUCCESS)
        c.callback_data[d.function] = d.module;
      else
        k = {0, nullptr, "sanitizerSetCallbackData failed for kernel " + names.base};
    }
    if (!k.error.empty())
      say_untraced(a, k.error + ": it runs uninstrumented");
    if (a.config.verbose) {
      char mask[32];
      std::snprintf(mask, sizeof mask, "%#llx", static_cast<unsigned long long>(k.mask));
      note(a, "kernel " + names.demangled + ": " + (by_ptx ? "ptx" : "sass") +
                  " backend, probe mask " + mask +
                  (prepared != c.prepared.end() ? " (set up at load)" : ""));
    }
    known = c.masks.emplace(d.function, k.mask).first;
    if (k.mask)
      c.kernel_ctxs[d.function] = k.userdata;
  }
  for (size_t i = 0; i < c.launches.size() && i < 64; ++i)
    if (known->second >> i & 1)
      ++c.launches[i];
  if (known->second && c.memory && (a.config.device.launch_state || !a.config.host_maps.empty()) &&
      !c.before_launch_failed) {
    void *kernel_ctx = a.config.device.launch_state ? c.kernel_ctxs[d.function] : nullptr;
    auto stream = from_graph ? std::nullopt : std::optional<CUstream>(d.stream);
    if (auto st = c.memory->before_launch(a.config, kernel_ctx, d.hStream, stream); !st) {
      c.before_launch_failed = true; // said once; the kernels see the values written before
      say(a, "preparing a traced launch failed (" + st.error() +
                 "): gpu probes no longer see new host map values, launch_start and "
                 "last_thread are wrong");
    }
    const std::string &refused = c.memory->stream_writes_refused();
    if (a.config.verbose && !refused.empty() && !std::exchange(c.said_stream_writes, true))
      std::fprintf(stderr, "gpubt: launches are prepared by copies: %s\n", refused.c_str());
  }
}

} // namespace

// Writes SIZE bytes of whole records to -c's socket FD, under the lock of its writers (a launch's
// printf records, the live copier's maps). False (errno set) when gpubt is gone.
bool send_records(Agent &a, int fd, const uint8_t *bytes, size_t size) {
  std::lock_guard<std::mutex> sending(a.events_send_mu);
  return abi::send_all(fd, bytes, size);
}

namespace {


// A traced launch is over (as far as the API goes): wait for it and pass its printf records
// on, so a long run prints as it goes and never fills the ring. Only with an events socket.
void on_launch_end(Agent &a, const Sanitizer_LaunchData &d) {
  auto it = a.contexts.find(d.context);
  if (it == a.contexts.end() || !it->second->memory)
    return;
  Context &c = *it->second;
  auto known = c.masks.find(d.function);
  if (known == c.masks.end() || !known->second)
    return;
  std::vector<uint8_t> records;
  if (!c.memory->drain_ring(records))
    return; // the records stay in the ring and come back at the end
  if (a.attached) {
    if (!a.control->send_events(std::string(records.begin(), records.end())))
      sanitizerEnableCallback(0, a.subscriber, SANITIZER_CB_DOMAIN_LAUNCH,
                              SANITIZER_CBID_LAUNCH_END); // gpubt is gone: detaching
    return;
  }
  if (!send_records(a, a.config.events_fd, records.data(), records.size())) {
    say(a, "the printf event socket failed: " + std::string(strerror(errno)));
    a.config.events_fd = -1;
    sanitizerEnableCallback(0, a.subscriber, SANITIZER_CB_DOMAIN_LAUNCH,
                            SANITIZER_CBID_LAUNCH_END);
  }
}

// A module file's bytes, NUL-terminated (PTX text), 8-aligned (a fatbin's headers).
bool read_module_file(const char *path, std::vector<uint64_t> &out) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof())
    return false;
  out.assign(bytes.size() / 8 + 1, 0);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return !bytes.empty();
}

// Where an instrumented image goes for a driver call that takes a file name.
const char *ptx_file(Agent &a, const PtxImage &image) {
  auto [it, fresh] = a.ptx_files.emplace(image.symbol, "");
  if (fresh) {
    std::string dir = a.config.results_path.substr(0, a.config.results_path.rfind('/') + 1);
    std::string path = dir + image.symbol + "." + std::to_string(getpid()) + ".ptx";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << image.ptx;
    if (out.close(), out)
      it->second = path;
  }
  return it->second.empty() ? nullptr : it->second.c_str();
}

// Before the driver loads a module: hand it the instrumented PTX instead, by rewriting the call's
// image (or file name) argument in place (the driver reads its arguments from this block).
// After a load of an instrumented image succeeded: its userdata array's address in the current
// context, looked up now, while a driver call is safe.
void on_module_loaded_call(Agent &a, Sanitizer_CallbackId cbid, const Sanitizer_CallbackData &d,
                           const PtxImage &image) {
  auto it = a.contexts.find(d.context);
  void *handle = *static_cast<void *const *>(d.functionParams); // the CUmodule* / CUlibrary*
  if (it == a.contexts.end() || !handle ||
      *static_cast<const CUresult *>(d.functionReturnValue) != CUDA_SUCCESS)
    return;
  CUmodule module = nullptr;
  if (cbid == SANITIZER_CBID_DRIVER_API_cuLibraryLoadData ||
      cbid == SANITIZER_CBID_DRIVER_API_cuLibraryLoadFromFile) {
    static auto get_module =
        driver_function<CUresult (*)(CUmodule *, CUlibrary)>("cuLibraryGetModule");
    if (!get_module || get_module(&module, *static_cast<CUlibrary *>(handle)) != CUDA_SUCCESS)
      return;
  } else {
    module = *static_cast<CUmodule *>(handle);
  }
  CUdeviceptr address = module ? userdata_array(module, image) : 0;
  if (!address)
    return;
  it->second->userdata[module] = address;
  std::vector<KernelNames> kernels;
  for (const auto &kernel : image.kernels) {
    kernels.push_back(kernel_names(kernel));
    a.loaded_kernels.insert(kernels.back().base);
  }
  prepare_kernels(a, *it->second, d.context, module, kernels, &image);
}

void on_module_load_call(Agent &a, Sanitizer_CallbackId cbid, const Sanitizer_CallbackData &d) {
  // The image substituted at this thread's API_ENTER, for its API_EXIT.
  static thread_local const PtxImage *substituted = nullptr;
  if (d.callbackSite == SANITIZER_API_EXIT && substituted) {
    const PtxImage *image = std::exchange(substituted, nullptr);
    return on_module_loaded_call(a, cbid, d, *image);
  }
  if (d.callbackSite != SANITIZER_API_ENTER || !a.images)
    return;
  bool from_file = false;
  switch (cbid) {
  case SANITIZER_CBID_DRIVER_API_cuModuleLoad:
  case SANITIZER_CBID_DRIVER_API_cuLibraryLoadFromFile:
    from_file = true;
    break;
  case SANITIZER_CBID_DRIVER_API_cuLibraryLoadData:
  case SANITIZER_CBID_DRIVER_API_cuModuleLoadData:
  case SANITIZER_CBID_DRIVER_API_cuModuleLoadDataEx:
  case SANITIZER_CBID_DRIVER_API_cuModuleLoadFatBinary:
    break;
  default:
    return;
  }
  // Each of their parameter blocks (generated_cuda_meta.h: cuModuleLoad_params,
  // cuLibraryLoadFromFile_params, cuLibraryLoadData_params, cuModuleLoadData(Ex)_params,
  // cuModuleLoadFatBinary_params) starts with the handle out pointer, then the image or path.
  struct LoadParams {
    void *handle;
    const void *image;
  };
  const void **image = &static_cast<LoadParams *>(const_cast<void *>(d.functionParams))->image;
  // The GPU it is for: the current context's, else (a library loaded before any context) the
  // first traced one's, else device 0's.
  int sm = 0;
  if (auto it = a.contexts.find(d.context); it != a.contexts.end())
    sm = it->second->sm;
  else if (!d.context)
    sm = a.contexts.empty() ? device_sm(0) : a.contexts.begin()->second->sm;
  std::vector<uint64_t> file;
  if (!sm || !*image ||
      (from_file && !read_module_file(static_cast<const char *>(*image), file)))
    return;
  auto start = std::chrono::steady_clock::now();
  Substitution sub = a.images->substitute(from_file ? file.data() : *image, sm, a.max_isa);
  const char *replacement = !sub.image ? nullptr
                            : from_file ? ptx_file(a, *sub.image)
                                        : sub.image->ptx.c_str();
  if (replacement) {
    *image = replacement;
    substituted = sub.image;
    std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start;
    // -v also leaves the instrumented PTX in gpubt's run folder (kept with GPUBT_KEEP_TEMP).
    const char *kept = a.config.verbose ? ptx_file(a, *sub.image) : nullptr;
    if (a.config.verbose)
      std::fprintf(stderr, "gpubt: %s: %zu kernel(s) instrumented in PTX (%s) in %.1f ms\n",
                   d.functionName, sub.image->kernels.size(), kept ? kept : "",
                   ms.count());
  } else if (sub.image) {
    say(a, std::string(d.functionName) + ": cannot write the instrumented PTX next to " +
               a.config.results_path + ": the module is patched in SASS instead");
  } else if (!sub.why.empty() && a.config.verbose) {
    std::fprintf(stderr, "gpubt: %s: no PTX backend for this module: %s\n", d.functionName,
                 sub.why.c_str());
  }
}

// The program synchronized with the GPU: maps gpu probes write and host probes read are written
// back, so host probes see the GPU's values from then on.
void on_synchronized(Agent &a, const Sanitizer_SynchronizeData &d) {
  auto it = a.contexts.find(d.context);
  if (it == a.contexts.end() || !it->second->memory || it->second->write_back_failed)
    return;
  if (auto st = it->second->memory->write_back_host_maps(a.config, d.hStream); !st) {
    it->second->write_back_failed = true;
    say(a, "writing the GPU's values into the host's maps failed (" + st.error() +
               "): host probes no longer see new GPU values");
  }
}

} // namespace

void add_loaded_kernels(const Agent &a, abi::AgentResults &results) {
  if (abi::some_probe_unmatched(results.images, a.config.device.probes.size()))
    results.kernels = a.loaded_kernels;
}

abi::DeviceImage close_context(Agent &a, CUcontext ctx, Context &c,
                               std::map<std::string, std::string> &kernel_names) {
  abi::DeviceImage img;
  img.device = c.device;
  if (c.memory && a.live && !a.live->forget(ctx, !a.exiting)) {
    say(a, "a copy of device " + std::to_string(c.device) + "'s maps did not end: they are not "
           "read, and their memory stays");
    c.memory.reset();
  }
  if (c.memory) {
    kernel_names.insert(c.memory->shortened_names().begin(), c.memory->shortened_names().end());
    img = c.memory->read_back(c.device);
    c.memory->release();
  }
  img.probe_launches = c.launches;
  return img;
}

void finish_context(Agent &a, CUcontext ctx) {
  auto it = a.contexts.find(ctx);
  if (it == a.contexts.end())
    return;
  Context &c = *it->second;
  if (c.memory && !c.write_back_failed)
    if (auto st = c.memory->write_back_host_maps(a.config, nullptr); !st)
      say(a, "writing the GPU's values into the host's maps at the end failed: " + st.error());
  a.results.images.push_back(close_context(a, ctx, c, a.results.kernel_names));
  a.contexts.erase(it);
}

namespace {

// A context's GPU clock, measured (on the clock service's thread, the context current): new
// kernel ctxs get the model, the ones made already are updated. The writes are made without
// a.mu: an application thread may hold the Compute Sanitizer's callback lock waiting for a.mu.
// The context's memory stays: its destruction waits for the clock service (forget(), up to a
// quarter second: a write blocked by the destruction then fails, which is not reported).
void on_clock(Agent &a, CUcontext ctx, const ClockModel *model, const std::string &error,
              ClockProbe *probe) {
  std::vector<uint64_t> kernel_ctxs;
  int device = -1;
  {
    std::lock_guard<std::recursive_mutex> lock(a.mu);
    auto it = a.contexts.find(ctx);
    if (it == a.contexts.end())
      return;
    Context &c = *it->second;
    device = c.device;
    if (!model)
      return say(a, "measuring the GPU clock of device " + std::to_string(device) + " failed (" +
                        error + "): gpu nsecs may be off host time by a few ms");
    if (c.memory)
      kernel_ctxs = c.memory->set_clock(*model);
  }
  const uint64_t drift[2] = {uint64_t(model->rate_q32), model->base};
  StreamWrites writes;
  for (uint64_t at : kernel_ctxs) {
    writes.add(at + offsetof(gpubt_device_ctx, clock_offset_ns), &model->offset_ns, 8);
    writes.add(at + offsetof(gpubt_device_ctx, clock_rate), drift, sizeof drift);
  }
  bool ok = kernel_ctxs.empty() || probe->write(writes).ok();
  std::lock_guard<std::recursive_mutex> lock(a.mu);
  if (!ok && a.contexts.count(ctx)) // not a context destroyed meanwhile
    say(a, "updating the GPU clock model of device " + std::to_string(device) + " failed");
  if (a.config.verbose)
    std::fprintf(stderr, "gpubt: device %d clock: offset %lld ns, drift %.2f ppm\n", device,
                 static_cast<long long>(model->offset_ns), model->rate_q32 / 4294.967296);
}

} // namespace

std::unique_ptr<ClockService> make_clock_service(Agent &a) {
  return std::make_unique<ClockService>(
      [&a](CUcontext ctx, const ClockModel *model, const std::string &error, ClockProbe *probe) {
        on_clock(a, ctx, model, error, probe);
      });
}

void note(Agent &a, const std::string &line) {
  if (!a.attached || !a.control->send_log(line))
    std::fprintf(stderr, "gpubt: %s\n", line.c_str());
}

void warn(Agent &a, const std::string &line) { note(a, abi::kAgentWarning + line); }

namespace {

// The context a launch callback's kernel launch (or graph replay) is made in; null for others.
CUcontext launch_context(Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid,
                         const void *cbdata) {
  if (domain == SANITIZER_CB_DOMAIN_LAUNCH && cbid == SANITIZER_CBID_LAUNCH_BEGIN)
    return static_cast<const Sanitizer_LaunchData *>(cbdata)->context;
  if (domain == SANITIZER_CB_DOMAIN_GRAPHS && cbid == SANITIZER_CBID_GRAPHS_LAUNCH_BEGIN)
    return static_cast<const Sanitizer_GraphLaunchData *>(cbdata)->context;
  if (domain == SANITIZER_CB_DOMAIN_GRAPHS && cbid == SANITIZER_CBID_GRAPHS_NODE_LAUNCH_BEGIN) {
    const auto &node = *static_cast<const Sanitizer_GraphNodeLaunchData *>(cbdata);
    return node.nodeType == CU_GRAPH_NODE_TYPE_KERNEL ? node.launchData.context : nullptr;
  }
  return nullptr;
}

} // namespace

void sanitizer_callback(void *userdata, Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid,
              const void *cbdata) {
  Agent &a = *static_cast<Agent *>(userdata);
  if (ClockService::on_service_thread() || LiveCopier::on_copier_thread())
    return; // the agent's own clock kernel, its own map copies
  // Before a.mu: the clock service may be waiting for it while it measures this context.
  if (domain == SANITIZER_CB_DOMAIN_RESOURCE &&
      cbid == SANITIZER_CBID_RESOURCE_CONTEXT_DESTROY_STARTING && a.clock)
    a.clock->forget(static_cast<const Sanitizer_ResourceContextData *>(cbdata)->context);
  if (domain == SANITIZER_CB_DOMAIN_RESOURCE && (cbid == SANITIZER_CBID_RESOURCE_STREAM_CREATED ||
                                                 cbid == SANITIZER_CBID_RESOURCE_STREAM_DESTROY_STARTING)) {
    const auto &d = *static_cast<const Sanitizer_ResourceStreamData *>(cbdata);
    if (cbid == SANITIZER_CBID_RESOURCE_STREAM_CREATED) {
      a.streams.created(d.context, d.stream);
    } else {
      a.streams.destroyed(d.context, d.stream);
      a.watch.stream_destroyed(d.context, d.stream);
    }
    return;
  }
  if (domain == SANITIZER_CB_DOMAIN_RESOURCE &&
      cbid == SANITIZER_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
    a.streams.context_destroyed(static_cast<const Sanitizer_ResourceContextData *>(cbdata)->context);
    a.watch.context_destroyed(static_cast<const Sanitizer_ResourceContextData *>(cbdata)->context);
    forget_live_copies(static_cast<const Sanitizer_ResourceContextData *>(cbdata)->context);
  }
  KnownModule loaded;
  if (domain == SANITIZER_CB_DOMAIN_RESOURCE && cbid == SANITIZER_CBID_RESOURCE_MODULE_LOADED) {
    const auto &d = *static_cast<const Sanitizer_ResourceModuleData *>(cbdata);
    loaded = read_module(d);
    if (a.control) { // dormant-capable: remember it; while gpubt attaches, it patches it
      std::lock_guard<std::mutex> lock(a.known_mu);
      a.known_modules[d.module] = loaded;
      if (a.attaching) {
        a.deferred.push_back(d.module);
        return;
      }
    }
  }
  // The program's first launch in a -c context waits for its live-copy preparation (no lock held).
  if (CUcontext launching = launch_context(domain, cbid, cbdata);
      launching && !await_live_copies(launching) && a.config.verbose)
    note(a, "a CUDA context's own copy kernel was not ready at its first launch (500 ms): "
            "unless it gets ready, its maps are copied with the Compute Sanitizer's copy, which "
            "waits for running kernels");
  if (domain == SANITIZER_CB_DOMAIN_LAUNCH && cbid == SANITIZER_CBID_LAUNCH_BEGIN) {
    // An attach or detach waiting for a launch (not in graph callbacks: a driver call there
    // hangs the launch).
    run_quiet_patching(a, static_cast<const Sanitizer_LaunchData *>(cbdata)->stream);
    a.watch.launching(*static_cast<const Sanitizer_LaunchData *>(cbdata));
  }
  if (domain == SANITIZER_CB_DOMAIN_LAUNCH && cbid == SANITIZER_CBID_LAUNCH_END)
    a.watch.launched(*static_cast<const Sanitizer_LaunchData *>(cbdata));
  if (domain == SANITIZER_CB_DOMAIN_GRAPHS) { // a replay is one watched launch (launch_watch.h)
    if (cbid == SANITIZER_CBID_GRAPHS_LAUNCH_BEGIN)
      return a.watch.graph_launching(*static_cast<const Sanitizer_GraphLaunchData *>(cbdata));
    if (cbid == SANITIZER_CBID_GRAPHS_LAUNCH_END)
      return a.watch.graph_launched(*static_cast<const Sanitizer_GraphLaunchData *>(cbdata));
    const auto &node = *static_cast<const Sanitizer_GraphNodeLaunchData *>(cbdata);
    if (cbid == SANITIZER_CBID_GRAPHS_NODE_LAUNCH_BEGIN &&
        node.nodeType == CU_GRAPH_NODE_TYPE_KERNEL && !node.isGraphUpload)
      a.watch.graph_node(node.launchData);
  }
  std::lock_guard<std::recursive_mutex> lock(a.mu);
  if (domain == SANITIZER_CB_DOMAIN_DRIVER_API)
    return on_module_load_call(a, cbid, *static_cast<const Sanitizer_CallbackData *>(cbdata));
  if (domain == SANITIZER_CB_DOMAIN_LAUNCH && cbid == SANITIZER_CBID_LAUNCH_BEGIN)
    return on_launch(a, *static_cast<const Sanitizer_LaunchData *>(cbdata), false);
  if (domain == SANITIZER_CB_DOMAIN_SYNCHRONIZE)
    return on_synchronized(a, *static_cast<const Sanitizer_SynchronizeData *>(cbdata));
  if (domain == SANITIZER_CB_DOMAIN_LAUNCH && cbid == SANITIZER_CBID_LAUNCH_END) {
    if (a.config.events_fd >= 0 || a.stream_events)
      on_launch_end(a, *static_cast<const Sanitizer_LaunchData *>(cbdata));
    return;
  }
  if (domain == SANITIZER_CB_DOMAIN_GRAPHS && cbid == SANITIZER_CBID_GRAPHS_NODE_LAUNCH_BEGIN) {
    // Kernels launched only from CUDA graphs never pass LAUNCH_BEGIN.
    const auto &node = *static_cast<const Sanitizer_GraphNodeLaunchData *>(cbdata);
    if (node.nodeType == CU_GRAPH_NODE_TYPE_KERNEL && !node.isGraphUpload)
      on_launch(a, node.launchData, true);
    return;
  }
  if (domain != SANITIZER_CB_DOMAIN_RESOURCE)
    return;
  switch (cbid) {
  case SANITIZER_CBID_RESOURCE_CONTEXT_CREATION_FINISHED:
    return on_context_created(a, *static_cast<const Sanitizer_ResourceContextData *>(cbdata));
  case SANITIZER_CBID_RESOURCE_MODULE_LOADED:
    return on_module_loaded(a, *static_cast<const Sanitizer_ResourceModuleData *>(cbdata), loaded);
  case SANITIZER_CBID_RESOURCE_MODULE_UNLOAD_STARTING:
    return on_module_unload(a, *static_cast<const Sanitizer_ResourceModuleData *>(cbdata));
  case SANITIZER_CBID_RESOURCE_CONTEXT_DESTROY_STARTING: {
    CUcontext ctx = static_cast<const Sanitizer_ResourceContextData *>(cbdata)->context;
    forget_context(a, ctx);
    finish_context(a, ctx);
    return write_results(a);
  }
  default:
    return;
  }
}

} // namespace gpubt::agent
