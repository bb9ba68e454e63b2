// What codegen hands the runtime: maps to create, BPF programs to load and attach, and the
// tables needed to decode events and print maps. No compiler types here: the runtime (and the
// in-process GPU agent) must not depend on the frontend or LLVM.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/abi/probe_point.h"

namespace gpubt::abi {

// A value's byte layout and how to print it.
struct ValueType {
  // KernelName: u64 stub or handle, see kernel_names_map. UStack: size/8 u64 user return
  // addresses, innermost first, 0-padded; KStack: the same of kernel addresses. PyStack:
  // Python frames as code objects in a process (runtime/abi/python_stack.h). UstackPy:
  // ustack(py), elems {PyStack, UStack} at offsets, printed with the Python frames spliced in.
  // Record: a C struct/union, fields elems at offsets named by names; Array: size/elems[0].size
  // elements of elems[0].
  // Buffer, Inet, MacAddr, Errno, SignalName, Username, CgroupPath: frontend/types.h's kinds of
  // the names.
  // Bool: a uint8 printed as true or false. NamedTuple: bpftrace's record `(a = 1, b = "x")`,
  // laid out as a Tuple, named as a Record, printed `{ .a = 1, .b = x }` in map keys too.
  enum Kind : uint8_t { None, Int, UInt, String, Tuple, Enum, UserSym, Probe, Timestamp,
                        KernelName, UStack, Record, Array, Buffer, Inet, MacAddr, Errno,
                        Username, CgroupPath, KStack, PyStack, UstackPy, Bool, NamedTuple,
                        SignalName };
  Kind kind = None;
  uint32_t size = 0;               // bytes
  std::vector<ValueType> elems;    // Tuple, Record, NamedTuple: the fields; Array: the element
  std::vector<uint32_t> offsets;   // Tuple, Record, NamedTuple: byte offset of each elem
  std::vector<std::string> names;  // Record, NamedTuple: field names
  std::string enum_name;           // Enum: key into ProgramSpec::enums; Timestamp: strftime format
  bool enum_signed = false;        // Enum: underlying integer is signed
  bool pointer = false;            // UInt: an address, printed in hex in bpftrace head's style
};

enum class AggKind : uint8_t { None, Count, Sum, Min, Max, Avg, Stats, Hist, Lhist, Tseries };

// How tseries() folds one interval's values (frontend::TseriesAgg's values).
enum class TseriesAgg : uint8_t { Last, Avg, Max, Min, Sum };

// Value layouts of the aggregations, per CPU (the runtime sums/merges CPUs):
//   Count, Sum:      int64 / uint64 (ValueType says which)
//   Min, Max:        struct { int64 value; uint64 is_set; }
//   Avg, Stats:      struct { int64 sum; uint64 count; }
//   Hist, Lhist:     uint64 count; the BPF key is the user key followed by a uint64 bucket index
//                    (hist: bpftrace's log2 buckets; lhist: 0 = below min, 1.. = steps, last = >= max)
//   Tseries:         TseriesValue; the BPF key is the user key followed by a uint64 slot, the
//                    interval's number (its start / interval_ns) modulo the intervals kept
struct MinMaxValue {
  int64_t value;
  uint64_t is_set;
};
struct AvgValue {
  int64_t sum;
  uint64_t count;
};
// One CPU's value of one interval (bpftrace's layout). meta: Last: the time it was set; Avg: how
// many values; Min, Max: 1 once set. epoch: the interval's number; 0 never set.
struct TseriesValue {
  int64_t value;
  uint64_t meta;
  uint64_t epoch;
};

struct MapSpec {
  std::string name;      // "@x", "@" for the anonymous map
  AggKind agg = AggKind::None;
  ValueType key;         // None for a scalar map (BPF key is a uint64 0)
  ValueType value;       // AggKind::None: the stored type; Count/Sum/Min/Max: Int or UInt size 8
  uint32_t bpf_type = 0; // BPF_MAP_TYPE_*
  uint32_t key_size = 0, value_size = 0, max_entries = 0;
  int64_t lhist_min = 0, lhist_max = 0, lhist_step = 0;
  // Tseries: the interval's length, how many intervals a key keeps, how one interval folds
  uint64_t tseries_interval_ns = 0, tseries_intervals = 0;
  TseriesAgg tseries_agg = TseriesAgg::Last;
  bool internal = false; // not a user map (ring buffer, scratch, globals): never printed
};

// Every event in the ring buffer starts with this header, then the payload.
enum class EventKind : uint32_t {
  Printf = 1, // index: into ProgramSpec::formats; payload: args at FormatSpec offsets
  Exit,       // payload: none, or exit(code)'s int64 code
  PrintMap,   // index: map
  ClearMap,   // index: map
  ZeroMap,    // index: map
  Time,       // index: into ProgramSpec::time_formats; payload: none (user space takes the time)
  PrintValue, // index: into ProgramSpec::formats (one arg, format unused)
  System,     // index: into ProgramSpec::formats: the command, formatted as printf does
  Cat,        // index: into ProgramSpec::formats: the file's path, formatted as printf does
  Span,       // --timeline: index into ProgramSpec::spans; payload: EventStamp, then the args
  GpuLaunch,  // --timeline: a gpu launch ended; payload: GpuLaunchRecord
  Join,       // index: into ProgramSpec::joins; payload: JoinSpec::args strings of JoinSpec::size
  HelperError,// -k: index: into ProgramSpec::helper_errors; payload: int64 return code
  WatchpointAttach, // index: the watchpoint probe; payload: uint64 address to watch
  LiveMaps,   // an agent's device maps while the program runs (runtime/abi/live_maps.h)
  RunningLaunches, // an agent's launches running now (runtime/abi/running_launches.h)
  FinishedLaunches, // an agent's launches that finished, with start and end (finished_launches.h)
};
struct EventHeader {
  uint32_t kind;
  uint32_t index;
};

// --timeline: when and where an event happened. Span events start with it, and with
// ProgramSpec::timeline every Printf payload ends with it (after the format's args).
constexpr uint32_t kStampGpu = 1; // EventStamp::flags: a gpu probe's (tid: the kernel's index)
struct EventStamp {
  uint64_t nsecs; // CLOCK_MONOTONIC, as `nsecs` (gpu: bench/gpu/CLOCK.md's mapping)
  uint32_t pid;
  uint32_t tid;
  uint32_t probe; // index into ProgramSpec::probe_names
  uint32_t flags;
};
static_assert(sizeof(EventStamp) == 24);

// --timeline: sent by a launch's last thread (after its exit probes), as a gpu ring record.
constexpr uint32_t kLaunchKernelNameSize = 64; // gpubt_device_ctx::kernel_name
struct GpuLaunchRecord {
  uint64_t start_ns; // the launch's earliest thread entry `nsecs` (launch_start)
  uint64_t end_ns;   // the last thread's exit `nsecs`
  uint32_t pid;
  uint32_t kernel_index; // the agent's, as EventStamp::tid of the kernel's printfs
  char kernel[kLaunchKernelNameSize]; // NUL-padded, as gpubt_device_ctx::kernel_name
};
static_assert(sizeof(GpuLaunchRecord) == 88);

// join(argv[, delim]): up to `args` strings of `size` bytes each (an empty one ends the list).
struct JoinSpec {
  std::string delim = " ";
  uint32_t args = 16, size = 64;
};

// -k/-kk: where a BPF helper returned an error, for bpftrace's WARNING line.
struct HelperErrorSpec {
  std::string helper; // "map_lookup_elem", "probe_read", ...
  uint32_t line = 0, col = 0;
};

struct FormatArg {
  ValueType type;
  uint32_t offset = 0; // from the start of the payload (after EventHeader)
};
struct FormatSpec {
  std::string format; // printf format as written (escapes decoded), bpftrace conversions
  std::vector<FormatArg> args;
  // errorf(), warnf(): printed to stderr between the diagnostic's text before and after it.
  bool to_stderr = false;
  std::string before, after;
};

// --timeline: one edge of a span (a function probed at both entry and return). Entry events
// carry the catalogued API function's arguments, return events its retval.
struct SpanSpec {
  std::string name; // the function
  bool exit = false;
  std::vector<std::string> arg_names;
  std::vector<FormatArg> args; // offsets from the payload's start, past the EventStamp
  std::vector<bool> addresses; // per arg: a pointer or handle, shown in hex
};

// Hang: gpu:hang, run on the host like BEGIN (hang_ctx.h) when a CUDA launch has run interval_ns.
enum class AttachKind : uint8_t { Begin, End, Interval, Uprobe, Uretprobe, Tracepoint, Kprobe,
                                  Kretprobe, Profile, Usdt, Software, Hardware, Watchpoint, Hang,
                                  LaunchEnd };

struct ProbeSpec {
  std::string name;   // canonical probe name, as `probe` prints it
  AttachKind kind = AttachKind::Begin;
  std::string target; // uprobe: path or library alias; tracepoint: category
  std::string func;   // uprobe: function pattern (wildcards allowed); tracepoint: event name;
                      // hang, launch_end: kernel pattern
  uint64_t interval_ns = 0; // interval, profile: the period; software/hardware: the count;
                            // hang: how long a launch runs before the probe fires
  // usdt: one probe site of file `target`, found by the compiler: the uprobe's file offset and
  // the semaphore's (0: none), which the kernel counts while the probe is attached.
  uint64_t offset = 0, semaphore = 0;
  // watchpoint: a hardware breakpoint on watch_length bytes at address `offset`, watch_mode of
  // r/w/x. watch_later: the function form (watchpoint:FUNC+argN): attached when its setup uprobe
  // (a hidden probe) sends WatchpointAttach with the address, in process `target`'s; then the
  // process, stopped by the setup probe, continues, unless watch_async.
  uint32_t watch_length = 0;
  std::string watch_mode;
  bool watch_later = false, watch_async = false;
  // struct bpf_insn array. A map reference is a ld_imm64 with src_reg = BPF_PSEUDO_MAP_FD and
  // imm = index into ProgramSpec::maps; the loader replaces the index with the map's fd.
  std::vector<uint64_t> insns;
  bool sleepable = false;
  // Added by codegen, not written in the script (saving API arguments for uretprobes, learning
  // kernel handles for kname()): not counted in "Attaching N probes", and a target or
  // function that cannot be found or attached is skipped silently.
  bool hidden = false;
};

// Each function a uprobe attaches to gets an attach cookie: this tag | (index of its expanded
// probe name, "uprobe:PATH:func", in ProgramSpec::probe_names) << 32 | (index of its name in the
// session's function table). `func` is the whole cookie (printed by the session's symbolizer,
// so names print even after the traced process has exited; without a cookie, on old kernels,
// it is the function's address); `probe` in a wildcard uprobe is the probe-name index.
constexpr uint64_t kFuncCookieTag = 1ull << 63;
constexpr uint64_t kCookieFuncMask = 0xffffffffull;

// Words of the globals array map (map index ProgramSpec::globals_map, value = uint64[N]),
// written by the runtime before attaching.
// GlobalLostEvents: events dropped because the ring buffer was full (programs add to it).
// After the GlobalSlotCount fixed words, one per map of ProgramSpec::maps that holds keys
// (global_map_drops_slot): the updates the kernel refused it, a full map's new keys.
enum GlobalSlot : uint32_t {
  GlobalStartNs = 0,
  GlobalChildPid = 1,
  GlobalLostEvents = 2,
  GlobalSlotCount = 3
};
constexpr uint32_t global_map_drops_slot(uint32_t map_index) { return GlobalSlotCount + map_index; }

// gpu probes (runtime/abi/device_abi.h has the device-side layouts they use).
struct DeviceProbeSpec {
  std::string name;     // canonical probe name, "gpu:kretprobe:vectorAdd"
  std::string kernel;   // kernel pattern (wildcards): demangled base name, signature or mangled
  ProbePoint point;     // where it runs: Entry (gpu:kprobe), Exit (gpu:kretprobe)
  std::string function; // its function in the image, "gpubt_probe_<N>"
  // PTX: the function the Compute Sanitizer patches at its point: `function`, or the point's
  // dispatcher where several probes share it (targets/ptx). Empty for other targets.
  std::string patch;
};

// A map used by gpu probes: lives in device memory (gpubt_device_ctx::maps[i] for maps[i]).
struct DeviceMapSpec {
  int map_index = -1;       // into ProgramSpec::maps (name, agg, types, printing)
  uint32_t capacity = 0;    // entries, a power of two; 1 for a scalar map, or one entry per SM
                            // (a scalar aggregation: entries of one key, merged like per-CPU)
  uint32_t key_size = 0;    // device key bytes (user key padded to 8); 0 for a scalar map
  uint32_t value_size = 0;  // device value bytes (multiple of 8)
  uint32_t entry_size = 0;  // 8 + key_size + value_size
  uint32_t buckets = 0;     // Hist/Lhist: uint64 buckets per value
  // Every slot is READY (key 0, value 0) from the start and probes never claim: striped scalar
  // aggregations that start at zero. The host skips the slots still all zero.
  bool prefilled = false;
  // A plain map host probes write and gpu probes only read: the agent fills the device table from
  // the BPF map (ProgramSpec::maps[map_index]) before each traced launch, so a kernel sees the
  // host's values as of its launch. gpu probes never write it; it is not printed from the device.
  // Capacity: the BPF map's max_entries rounded up to a power of two, at most 4096.
  bool from_host = false;
  // A plain map gpu probes write and host probes only read: the agent writes the table's READY
  // entries into the BPF map whenever the program synchronizes with the GPU (stream or context
  // synchronize) and at its end, so host probes and END see the GPU's values as of the last
  // synchronization. It is not printed from the device (the BPF map prints). Capacity: as
  // from_host's.
  bool to_host = false;
  // Host probes name it (print, clear, zero, ...): gpubt asks the agents for its values while the
  // program runs when interval probes may read it (live_maps.h). Not sent to the agents.
  bool host_named = false;
  // An aggregation only gpu probes update whose values host probes read (`@m[k]`, `for`, `@m /
  // 2`): the tracer writes the GPU's values, each key's folded into one, into the BPF map
  // (ProgramSpec::maps[map_index]) that those reads look up, at each live copy and before END;
  // it prints from the device as before. Not sent to the agents.
  bool host_reads = false;
  uint64_t storage_size() const { return 32 + uint64_t(capacity) * entry_size; }
};

// A compiled device program as its target made it (DeviceTarget::emit).
enum class DeviceFormat : uint8_t {
  Ptx,         // PTX text: the patch functions
  SpirvVulkan, // SPIR-V words: a library module the Vulkan layer links into compute shaders
  SpirvOpenCL, // SPIR-V words: a library module for OpenCL / Level Zero kernels
};
enum DeviceFeature : uint32_t {
  DeviceReadsClock = 1,  // a probe reads the GPU's clock (nsecs)
  DeviceReadsCycles = 2, // a probe reads a cycle counter (clock): Vulkan needs shaderSubgroupClock
  // A probe counts last_thread or reads launch_start: per-launch state in the kernel's context,
  // right only while its launches do not overlap (the Vulkan layer orders a traced pipeline's
  // dispatches; CUDA's stream order does it for the agent).
  DeviceLaunchState = 4,
  // gpu:block_begin / gpu:block_end: per-block state (gpubt_device_ctx::block_slots), right only
  // while launches of one kernel do not overlap, as DeviceLaunchState.
  DeviceBlockState = 8,
  // A probe writes records into the device ring (printf, --timeline's launch records): only
  // then does the agent drain the ring after each traced launch. A host printf (a BEGIN banner)
  // has a format too, but nothing on the device writes it.
  DeviceRecords = 16,
};
struct DeviceCode {
  DeviceFormat format = DeviceFormat::Ptx;
  std::string bytes;
  uint32_t features = 0; // DeviceFeature bits
};

struct DeviceProgramSpec {
  std::vector<DeviceProbeSpec> probes; // empty: no gpu probes
  std::vector<DeviceMapSpec> maps;
  std::string ptx;  // every patch function, for `ptxas --compile-as-tools-patch` (the PTX image's
                    // bytes: its readers predate `images`)
  std::vector<DeviceCode> images; // the other targets' images of the same probes and maps
  std::string arch; // "sm_90"
  uint32_t ring_capacity = 0; // printf ring data bytes (power of two)
  bool launch_state = false;  // launch_start read where no last_thread resets it: the agent resets per launch
  uint32_t features = 0;      // DeviceFeature bits of the probes, set by codegen (every image alike)
};

constexpr uint32_t kKernelNameSize = 512; // PyTorch's mangled template kernels run past 300

struct ProgramSpec {
  std::vector<MapSpec> maps;
  std::vector<ProbeSpec> probes;
  std::vector<FormatSpec> formats;
  std::vector<std::string> time_formats;
  std::vector<JoinSpec> joins;
  std::vector<HelperErrorSpec> helper_errors;
  std::vector<SpanSpec> spans;
  bool timeline = false; // --timeline: Printf payloads end with an EventStamp
  // A LaunchEnd probe reads launch_call: the agent's launch timer also records each launch call
  // (CUPTI's records of the launch calls: a cost of their own on every launch).
  bool launch_calls = false;
  std::vector<std::string> probe_names; // ValueType::Probe values index this
  std::map<std::string, std::map<int64_t, std::string>> enums;
  int ringbuf_map = -1; // index into maps
  int globals_map = -1; // index into maps
  // kname(): a hash map u64 handle -> char[kKernelNameSize] mangled name, filled by hidden
  // probes on cuModuleGetFunction/cuLibraryGetKernel; KernelName values found there print that
  // name, others are symbolized in the traced process (host stubs). -1 when unused.
  int kernel_names_map = -1;
  // pystack: a hash map u32 pid -> abi::PythonProcess (python_stack.h) the runtime fills for
  // each process whose interpreter it found. -1 when unused.
  int python_procs_map = -1;
  DeviceProgramSpec device; // gpu probes, their maps and PTX
};

} // namespace gpubt::abi

// Hist buckets (bpftrace's log2 layout), shared by codegen (index) and the printer (labels):
//   0: value < 0;  1: value == 0;  k >= 2: 2^(k-2) <= value < 2^(k-1)
// Lhist buckets: 0: value < min;  1 + i: min + i*step <= value < min + (i+1)*step;
//   last (1 + (max-min)/step): value >= max.
