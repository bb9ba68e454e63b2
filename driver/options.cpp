// Option parsing with getopt_long; flags and their spelling follow bpftrace.
#include "driver/options.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <getopt.h>
#include <iostream>
#include <sstream>
#include <vector>

#include "driver/environment_help.h"
#include "driver/exit_codes.h"
#include "driver/option_error.h"
#include "driver/timeline_options.h"
#include "runtime/gpu/gpu_arch.h"

namespace gpubt::driver {

void print_usage(std::FILE *out) {
  std::fprintf(out,
      "gpubt %s: bpftrace's language as of 0.26 (0.17's output unless GPUBT_OUTPUT_STYLE=head), with gpu: probes in CUDA kernels and Vulkan shaders\n"
      "\n"
      "USAGE:\n"
      "    gpubt [options] filename [args...]\n"
      "    gpubt [options] -e 'program' [args...]\n"
      "    gpubt [options] - <stdin input>   read the program from standard input\n"
      "    gpubt -l [options] [pattern]\n"
      "    gpubt agent env|--help            the CUDA agent: how to start a job with it\n"
      "    Words after the script are its positional parameters $1, $2, ... ($# counts them).\n"
      "\n"
      "WHAT TO TRACE:\n"
      "    -e 'program'   execute this program\n"
      "    -c 'CMD'       run CMD and trace it; exit when it exits\n"
      "    -p PID         trace process PID (uprobes fire only in it)\n"
      "    -l [pattern]   list probes (tracepoints; uprobe:PATH:* lists a binary's functions;\n"
      "                   gpu:*:PATH:* the kernels in its fatbins, or with -c CMD / -p PID;\n"
      "                   a Vulkan -c CMD is run for the compute shaders it makes)\n"
      "    --usdt-file-activation  activate USDT semaphores by file (every process mapping it)\n"
      "\n"
      "OUTPUT:\n"
      "    -o file        write output to file instead of stdout\n"
      "    -f format      output format: text (default), json (bpftrace's), or json-keys (json\n"
      "                   with each map key a list of typed values)\n"
      "    -B MODE        output buffering mode ('line', 'full', 'none')\n"
      "    --raw-strings  print the traced program's strings as they are (text output shows\n"
      "                   their control characters as escapes such as \\x1b)\n"
      "    --metrics ADDR:PORT  serve the maps at http://ADDR:PORT/metrics for Prometheus while\n"
      "                   tracing (:PORT: every address, as Prometheus exporters do: anyone who\n"
      "                   can reach the port reads the maps; 127.0.0.1:PORT for this host only)\n"
      "    --metrics-series N  series one map may expose there: the top N, the rest summed into\n"
      "                   one other=\"true\" series (default 100; 0: no cap)\n"
      "%s"
      "\n"
      "GPU PROBES:\n"
      "    --gpu-backend=B  how gpu probes get into kernels: auto (default: compiled into the\n"
      "                   module's PTX where it has PTX, else patched into its SASS), ptx, sass\n"
      "    --gpu-arch=sm_XX  the GPU -l -v 'gpu:...' says each kernel's backend for (default:\n"
      "                   this machine's, from the CUDA driver, else sm_90)\n"
      "    --gpu-map-capacity=N  slots per keyed map of gpu probes (a power of two; default 2^20,\n"
      "                   fewer for maps of large values)\n"
      "    --gpu-key-spread=N  slots a key the same for a whole launch (@[kernel]) spreads over,\n"
      "                   by SM, so its warps' atomics do not queue on one (a power of two up to\n"
      "                   256; default 32; 1: one slot)\n"
      "\n"
      "COMPILING AND CHECKING:\n"
      "    --dry-run      parse, check and compile; attach nothing\n"
      "    --emit=STAGE   print a stage and stop: ast, llvm (IR), bpf (ELF object) or ptx (gpu)\n"
      "    -d, -dd        (dry run) print the program's AST\n"
      "    -I DIR         add the directory to the include search path\n"
      "    --include FILE add an #include file before preprocessing\n"
      "    --unsafe       allow unsafe builtin functions\n"
      "    -k, -kk        warn when a bpf helper returns an error\n"
      "    -b, --btf      accepted (bpftrace's): BTF is used wherever the kernel has it\n"
      "    --verify-llvm-ir  accepted (bpftrace's): every module gpubt builds is verified\n"
      "\n"
      "MESSAGES AND INFORMATION:\n"
      "    -v             verbose\n"
      "    -q             keep messages quiet\n"
      "    --no-warnings  disable all warning messages\n"
      "    --info         print what this machine supports: kernel BPF features and the GPU\n"
      "                   parts (CUDA agent, ptxas, Vulkan layer, driver, GPU)\n"
      "    -h, --help     show this help\n"
      "    -V, --version  print the version\n"
      "\n"
      "EXAMPLES:\n"
      "    gpubt -l 'host:uprobe:cudart:cudaMemcpy*' -c ./train     CUDA calls it can probe\n"
      "    gpubt -l 'gpu:*' -c ./train                            its kernels, as probes\n"
      "    gpubt -e 'host:uprobe:cudart:cudaMalloc { @bytes = hist(args.size); }' -c ./train\n"
      "    gpubt -e 'gpu:kretprobe:vectorAdd < @[tid] = count(); >' -c ./vectorAdd\n"
      "    gpubt -c ./train /usr/local/share/gpubt/tools/cudaevents.bt   every CUDA call\n"
      "    gpubt -p 4242 -e 'gpu:kretprobe:* { @[kernel] = count(); }'   a running job (agent)\n"
      "    gpubt -p 4242 /usr/local/share/gpubt/tools/gpuhang.bt  kernels running 2 s or more\n"
      "    gpubt --metrics 127.0.0.1:9464 -q tools/gpumetrics.bt       Prometheus metrics\n"
      "    gpubt --timeline trace.json -c ./train tools/cudaevents.bt  a trace for Perfetto\n"
      "\n"
      "%s\n%s"
      "\n"
      "SEE ALSO:\n"
      "    man gpubt; docs/reference.md (builtins and functions per probe kind) and docs/README.md\n",
      kVersion, kTimelineUsage, kExitStatusHelp, kEnvironmentHelp);
}

// A script file, or standard input for "-" (bpftrace's `bpftrace -`).
static Result<std::string> read_script(const std::string &path) {
  std::ostringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return make_error("failed to open file '" + path + "': " + std::strerror(errno));
  ss << in.rdbuf();
  return ss.str();
}

// bpftrace's checks and words: a value that saturates strtol or wraps in pid_t must not become
// pid -1 (every process) or 1 (init).
Result<pid_t> parse_pid(const std::string &text) {
  constexpr long pid_max = 4 * 1024 * 1024; // the kernel's PID_MAX_LIMIT
  size_t sign = !text.empty() && (text[0] == '-' || text[0] == '+');
  if (text.size() == sign || text.find_first_not_of("0123456789", sign) != std::string::npos)
    return make_error("pid '" + text + "' is not a valid decimal number");
  errno = 0;
  long v = std::strtol(text.c_str(), nullptr, 10);
  if (errno == ERANGE)
    return make_error("pid '" + text + "' outside of integer range");
  if (v < 1 || v > pid_max)
    return make_error("pid '" + text + "' out of valid pid range [1," + std::to_string(pid_max) +
                      "]");
  return static_cast<pid_t>(v);
}

Result<Options> parse_options(int argc, char **argv) {
  enum { OptDryRun = 256, OptEmit, OptGpuMapCapacity, OptGpuKeySpread, OptGpuBackend, OptRawStrings, OptGpuArch,
         OptMetrics, OptMetricsSeries };
  std::vector<option> long_opts = {
      {"help", no_argument, nullptr, 'h'},     {"version", no_argument, nullptr, 'V'},
      {"dry-run", no_argument, nullptr, OptDryRun}, {"emit", required_argument, nullptr, OptEmit},
      {"gpu-map-capacity", required_argument, nullptr, OptGpuMapCapacity},
      {"gpu-key-spread", required_argument, nullptr, OptGpuKeySpread},
      {"gpu-backend", required_argument, nullptr, OptGpuBackend},
      {"raw-strings", no_argument, nullptr, OptRawStrings},
      {"gpu-arch", required_argument, nullptr, OptGpuArch},
      {"metrics", required_argument, nullptr, OptMetrics},
      {"metrics-series", required_argument, nullptr, OptMetricsSeries}};
  for (const auto &opt : bpftrace_long_options())
    long_opts.push_back(opt);
  for (const auto &opt : timeline_long_options())
    long_opts.push_back(opt);
  long_opts.push_back({nullptr, 0, nullptr, 0});
  // ':' first, and opterr off: a bad option is said by option_error, in one line.
  const std::string short_opts = std::string(":e:c:p:lo:f:vhV") + kBpftraceShortOptions;
  opterr = 0;
  Options o;
  bool have_e = false;
  optind = 1;
  int c;
  // Options may follow the script file (`gpubt tools/launchlate.bt -c ./app`), as in bpftrace,
  // whose getopt permutes too.
  while ((c = getopt_long(argc, argv, short_opts.c_str(), long_opts.data(), nullptr)) != -1) {
    if (c == '?' || c == ':')
      return make_error(option_error(c, argv, long_opts));
    if (auto st = apply_bpftrace_flag(c, optarg, o.bt)) {
      if (!*st)
        return make_error(st->error());
      if (o.bt.info)
        return o;
      continue;
    }
    if (auto st = apply_timeline_option(c, optarg, o.timeline)) {
      if (!*st)
        return make_error(st->error());
      continue;
    }
    switch (c) {
    case 'e':
      o.program_text = optarg;
      o.program_name = "stdin";
      have_e = true;
      break;
    case 'c':
      o.child_command = optarg;
      break;
    case 'p': {
      auto pid = parse_pid(optarg);
      if (!pid)
        return make_error(pid.error());
      o.pid = *pid;
      break;
    }
    case 'l':
      o.list = true;
      break;
    case 'o':
      o.output_path = optarg;
      break;
    case 'f':
      if (std::string(optarg) == "json")
        o.format = runtime::OutputFormat::Json;
      else if (std::string(optarg) == "json-keys")
        o.format = runtime::OutputFormat::JsonKeys;
      else if (std::string(optarg) != "text")
        return make_error(std::string("Invalid output format \"") + optarg +
                          "\"\nValid formats: 'text', 'json', 'json-keys'");
      break;
    case 'v':
      o.verbose = true;
      break;
    case 'h':
      o.help = true;
      return o;
    case 'V':
      o.version = true;
      return o;
    case OptDryRun:
      o.dry_run = true;
      break;
    case OptRawStrings:
      o.raw_strings = true;
      break;
    case OptGpuMapCapacity: {
      char *end = nullptr;
      unsigned long v = std::strtoul(optarg, &end, 10);
      if (!*optarg || *end || v < 1 || v > (1ul << 30) || (v & (v - 1)))
        return make_error(std::string("--gpu-map-capacity takes a power of two up to 2^30, not '") +
                          optarg + "'");
      o.gpu_map_capacity = static_cast<uint32_t>(v);
      break;
    }
    case OptGpuKeySpread: {
      char *end = nullptr;
      unsigned long v = std::strtoul(optarg, &end, 10);
      if (!*optarg || *end || v < 1 || v > 256 || (v & (v - 1)))
        return make_error(std::string("--gpu-key-spread takes a power of two up to 256, not '") +
                          optarg + "'");
      o.gpu_key_spread = static_cast<uint32_t>(v);
      break;
    }
    case OptMetrics:
      o.metrics_address = optarg;
      break;
    case OptMetricsSeries: {
      char *end = nullptr;
      unsigned long v = std::strtoul(optarg, &end, 10);
      if (!*optarg || *end || *optarg == '-' || v > 1000000)
        return make_error(std::string("--metrics-series takes a number up to 1000000, not '") +
                          optarg + "'");
      o.metrics_series = static_cast<uint32_t>(v);
      break;
    }
    case OptGpuBackend:
      if (!abi::parse_backend(optarg, o.gpu_backend))
        return make_error(std::string("--gpu-backend takes auto, ptx or sass, not '") + optarg +
                          "'");
      break;
    case OptGpuArch:
      if (!runtime::parse_sm_arch(optarg))
        return make_error(std::string("--gpu-arch takes an architecture such as sm_80 or sm_90, "
                                      "not '") +
                          optarg + "'");
      o.gpu_arch = optarg;
      break;
    case OptEmit: {
      std::string s = optarg;
      if (s == "ast")
        o.emit = EmitStage::Ast;
      else if (s == "llvm")
        o.emit = EmitStage::Llvm;
      else if (s == "bpf")
        o.emit = EmitStage::Bpf;
      else if (s == "ptx")
        o.emit = EmitStage::Ptx;
      else
        return make_error("--emit takes ast, llvm, bpf or ptx, not '" + s + "'");
      break;
    }
    default:
      return make_error("");
    }
  }
  if (auto st = check_bpftrace_flags(o.bt, o.verbose); !st)
    return make_error(st.error());
  auto env = read_bpftrace_env();
  if (!env)
    return make_error(env.error());
  o.env = *env;
  if (o.list) {
    if (optind < argc)
      o.list_pattern = argv[optind++];
    if (optind < argc)
      return make_error("");
    return o;
  }
  if (!have_e) {
    if (optind >= argc)
      return make_error(kNoProgramError);
    std::string name = argv[optind++];
    auto text = read_script(name);
    if (!text)
      return make_error(text.error());
    o.program_name = name == "-" ? "stdin" : name;
    o.program_text = std::move(*text);
  }
  // As in bpftrace, every word after the script is a positional parameter ($1, $2, ...).
  while (optind < argc)
    o.params.push_back(argv[optind++]);
  if (!o.child_command.empty() && o.pid > 0)
    return make_error("-c and -p cannot be used together");
  return o;
}

} // namespace gpubt::driver
