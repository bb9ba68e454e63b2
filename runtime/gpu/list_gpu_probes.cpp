// Reads only each file's .nv_fatbin section (mapped, not copied) and the kernel names in it, so a
// gigabyte library lists in seconds; kernels match patterns as the agent matches them.
#include "runtime/gpu/list_gpu_probes.h"

#include <algorithm>
#include <optional>
#include <cctype>
#include <set>
#include <string_view>
#include <sys/stat.h>
#include <vector>

#include "runtime/abi/hang_ctx.h"
#include "runtime/gpu/gpu_arch.h"
#include "runtime/gpu/loaded_kernels.h"
#include "runtime/process/binary_paths.h"
#include "runtime/process/child_process.h"
#include "runtime/process/elf_section.h"
#include "runtime/process/symbols.h"
#include "runtime/ptx/fatbin_kernels.h"
#include "runtime/ptx/kernel_match.h"

namespace gpubt::runtime {
namespace {

// gpu:hang watches CUDA launches only (no Vulkan dispatch); the Vulkan layer inserts no memory
// or barrier probes.
constexpr const char *kProbeTypes[] = {"kprobe", "kretprobe", "block_begin", "block_end", "hang",
                                       "mem",    "load",      "store",       "atomic",    "barrier"};
bool vulkan_type(const std::string &type) {
  return type == "kprobe" || type == "kretprobe" || type == "block_begin" || type == "block_end";
}
bool memory_type(const std::string &type) {
  return type == "mem" || type == "load" || type == "store" || type == "atomic";
}
constexpr const char *kFatbinSection = ".nv_fatbin";

struct Pattern {
  std::vector<std::string> types; // the probe types the pattern's TYPE matches
  std::string file;               // empty: from -c or -p
  std::string space;              // gpu:load:global:...: memory probes' SPACE, as written
  std::string kernel = "*";
  // The probe as a script names it: gpu:TYPE[:SPACE]:KERNEL (a space only on memory probes).
  std::string probe(const std::string &type, const std::string &k) const {
    return "gpu:" + type + (space.empty() || !memory_type(type) ? "" : ":" + space) + ":" + k;
  }
};

// A FILE part is a path or a library name; kernel names have neither '/' nor ".so".
bool names_file(const std::string &s) {
  return s.find('/') != std::string::npos || s.find(".so") != std::string::npos;
}

Result<Pattern> parse_pattern(const std::string &pattern) {
  std::string rest = pattern.substr(4); // after "gpu:"
  size_t colon = rest.find(':');
  std::string type = rest.substr(0, colon);
  std::string tail = colon == std::string::npos ? "" : rest.substr(colon + 1);
  Pattern p;
  for (const char *t : kProbeTypes)
    if (match_wildcard(type.empty() ? "*" : type, t))
      p.types.push_back(t);
  if (p.types.empty())
    return make_error("'" + pattern + "': '" + type +
                      "' is no gpu probe type (gpu:kprobe, gpu:kretprobe, gpu:block_begin, "
                      "gpu:block_end, gpu:hang, gpu:mem, gpu:load, gpu:store, gpu:atomic, "
                      "gpu:barrier)");
  for (const char *space : {"global", "shared", "local"})
    if (tail.rfind(std::string(space) + ":", 0) == 0 &&
        std::any_of(p.types.begin(), p.types.end(), memory_type)) {
      p.space = space;
      p.types.erase(std::remove_if(p.types.begin(), p.types.end(),
                                   [](const std::string &t) { return !memory_type(t); }),
                    p.types.end());
      tail = tail.substr(p.space.size() + 1);
    }
  size_t file_end = tail.find(':');
  if (names_file(tail.substr(0, file_end))) {
    p.file = tail.substr(0, file_end);
    tail = file_end == std::string::npos ? "" : tail.substr(file_end + 1);
  }
  if (!tail.empty())
    p.kernel = tail;
  return p;
}

// A kernel name as a script can paste it: a name with characters an attach point cannot hold
// (blanks, `(`, `,`, `<`: grammar/Gpubt.g4's attach_char) in "double quotes".
std::string pasteable(const std::string &kernel) {
  static const std::string_view plain = "_./*?+-~$@[]#%=!&|^:";
  bool quote = false;
  for (char c : kernel)
    quote |= !isalnum(static_cast<unsigned char>(c)) && plain.find(c) == std::string_view::npos;
  if (!quote)
    return kernel;
  std::string q = "\"";
  for (char c : kernel)
    q += c == '"' ? std::string("\\\"") : std::string(1, c);
  return q + '"';
}

struct Arch {
  uint32_t sm = 90;
  std::string label; // "sm_90 (nvidia-smi)"
};

Result<Arch> choose_arch(const std::string &option) {
  if (!option.empty()) {
    auto sm = parse_sm_arch(option);
    if (!sm)
      return make_error("--gpu-arch takes an architecture such as sm_80 or sm_90, not '" + option +
                        "'");
    return Arch{*sm, option + " (--gpu-arch)"};
  }
  GpuArchs machine = machine_gpu_archs();
  for (const auto &a : machine.archs)
    if (auto sm = parse_sm_arch(a))
      return Arch{*sm, a + " (" + machine.source +
                           (machine.archs.size() > 1 ? ": the first of its GPUs'" : "") + ")"};
  return Arch{90, "sm_90 (default: no GPU found; --gpu-arch sm_XX picks another)"};
}

// The files to read, and whether each must hold a fatbin (one named file) or only some may.
Status files_to_list(const Pattern &p, const GpuListRequest &r, std::vector<std::string> &files,
                     bool &one_named) {
  one_named = !p.file.empty();
  if (one_named) {
    if (p.file.find('/') != std::string::npos) {
      files.push_back(p.file);
      return Ok{};
    }
    auto path = resolve_binary_path(p.file, r.pid);
    if (!path)
      return make_error("gpu: no library or program '" + p.file + "' found");
    files.push_back(*path);
    return Ok{};
  }
  if (!r.command.empty()) {
    auto args = split_command(r.command);
    if (args.empty())
      return make_error("-c: empty command");
    auto exe = find_in_path(args[0]);
    if (!exe)
      return make_error(exe.error());
    files.push_back(*exe);
    for (auto &lib : linked_libraries(*exe))
      files.push_back(std::move(lib));
    return Ok{};
  }
  if (r.pid > 0) {
    struct stat st;
    if (stat(("/proc/" + std::to_string(r.pid)).c_str(), &st) != 0)
      return make_error("no process with pid " + std::to_string(r.pid));
    files = mapped_files_with_prefix(r.pid, "");
    return Ok{};
  }
  return make_error("gpu: probes are listed from the fatbins of a program or library: name one "
                    "in the pattern (-l 'gpu:*:/path/to/app:*', -l 'gpu:kprobe:libfoo.so:*gemm*'), "
                    "or give the program (-c CMD) or a running process (-p PID)");
}

struct Row {
  std::string display; // the demangled signature
  ptx::KernelBackend backend;
};

struct FileKernels {
  std::string path;
  std::vector<Row> rows; // matching kernels, sorted, each once
  std::set<uint32_t> sass_archs, ptx_archs;
};

// FILE's matching kernels; nullopt when it has no fatbin (or, unless REQUIRED, cannot be read).
Result<std::optional<FileKernels>> read_file_kernels(const std::string &path, const Pattern &p,
                                                     uint32_t sm, bool required) {
  auto section = map_elf_section(path, kFatbinSection);
  if (!section) {
    if (required)
      return make_error(section.error());
    return std::optional<FileKernels>();
  }
  if (!section->found) {
    if (required)
      return make_error("'" + path + "' has no CUDA fatbin (no " + kFatbinSection +
                        " section): it holds no GPU kernels");
    return std::optional<FileKernels>();
  }
  auto kernels = ptx::fatbin_kernels(section->bytes);
  if (!kernels)
    return make_error(path + ": " + kernels.error());
  FileKernels fk;
  fk.path = path;
  for (const auto &k : *kernels) {
    fk.sass_archs.insert(k.sass_archs.begin(), k.sass_archs.end());
    fk.ptx_archs.insert(k.ptx_archs.begin(), k.ptx_archs.end());
    auto names = ptx::kernel_names(k.name);
    if (ptx::kernel_matches(p.kernel, names))
      fk.rows.push_back({names.demangled, ptx::kernel_backend(k, sm)});
  }
  std::sort(fk.rows.begin(), fk.rows.end(),
            [](const Row &a, const Row &b) { return a.display < b.display; });
  fk.rows.erase(std::unique(fk.rows.begin(), fk.rows.end(),
                            [](const Row &a, const Row &b) { return a.display == b.display; }),
                fk.rows.end());
  return std::optional<FileKernels>(std::move(fk));
}

std::string arch_list(const std::set<uint32_t> &archs, const char *prefix) {
  std::string s;
  for (uint32_t a : archs)
    s += (s.empty() ? "" : " ") + std::string(prefix) + std::to_string(a);
  return s.empty() ? "none" : s;
}

// The -c program links the Vulkan loader: its shaders are listed by running it.
bool links_vulkan(const std::vector<std::string> &files) {
  for (const auto &f : files)
    if (f.substr(f.rfind('/') + 1).rfind("libvulkan.so", 0) == 0)
      return true;
  return false;
}

void print_verbose(const std::vector<FileKernels> &files, const Pattern &p, const Arch &arch,
                   std::ostream &out) {
  out << "# GPU architecture " << arch.label << "; backend each kernel could get: ptx (PTX the "
      << "driver can JIT for it), sass (a cubin for it only), none\n";
  for (const auto &f : files) {
    out << "# " << f.path << ": SASS " << arch_list(f.sass_archs, "sm_") << "; PTX "
        << arch_list(f.ptx_archs, "compute_") << "\n";
    for (const auto &type : p.types)
      for (const auto &row : f.rows) {
        std::string backend = ptx::backend_name(row.backend);
        out << backend << std::string(6 - backend.size(), ' ')
            << p.probe(type, pasteable(row.display)) << "\n";
        if (type == "hang") // its args, as -lv lists a tracepoint's
          for (const auto &a : abi::kHangArgs)
            out << "    " << (a.size == 8 ? "uint64_t " : "uint32_t ") << a.name << "\n";
      }
  }
}

} // namespace

bool is_gpu_pattern(const std::string &pattern) { return pattern.rfind("gpu:", 0) == 0; }

Status list_gpu_probes(const GpuListRequest &request, std::ostream &out) {
  auto pattern = parse_pattern(request.pattern);
  if (!pattern)
    return make_error(pattern.error());
  Arch arch;
  if (request.verbose || !request.arch.empty()) {
    auto chosen = choose_arch(request.arch);
    if (!chosen)
      return make_error(chosen.error());
    arch = *chosen;
  }
  std::vector<std::string> paths;
  bool one_named = false;
  if (auto st = files_to_list(*pattern, request, paths, one_named); !st)
    return st;
  std::vector<FileKernels> files;
  for (const auto &path : paths) {
    auto fk = read_file_kernels(path, *pattern, arch.sm, one_named);
    if (!fk)
      return make_error(fk.error());
    if (*fk)
      files.push_back(std::move(**fk));
  }
  std::set<std::string> shaders; // a Vulkan program's, matching the pattern
  bool vulkan = !one_named && !request.command.empty() && links_vulkan(paths);
  if (vulkan) {
    std::ostream &err = request.err ? *request.err : out;
    auto made = vulkan_kernels_made_by(request.command, err);
    if (!made && files.empty())
      return make_error(made.error());
    if (!made)
      err << "WARNING: " << made.error() << "\n";
    else
      for (const auto &name : *made)
        if (match_wildcard(pattern->kernel, name))
          shaders.insert(name);
  }
  if (files.empty() && vulkan && shaders.empty())
    return make_error("'" + request.command + "' made no Vulkan compute shader named '" +
                      pattern->kernel + "' (a gpu probe matches an entry point or the debug name "
                      "of a compute module or pipeline)");
  if (files.empty() && !vulkan) {
    if (request.command.empty())
      return make_error("no file process " + std::to_string(request.pid) +
                        " maps has a CUDA fatbin: no GPU kernels to list (a library it has not "
                        "loaded yet can be named in the pattern)");
    return make_error("neither '" + paths.front() +
                      "' nor a library it links has a CUDA fatbin: no GPU kernels to list "
                      "(libraries loaded with dlopen, as PyTorch's are, can be named in the "
                      "pattern or listed with -p PID)");
  }
  if (request.verbose) {
    if (!files.empty())
      print_verbose(files, *pattern, arch, out);
    if (vulkan) {
      out << "# Vulkan compute shaders '" << request.command << "' made (entry points, debug "
          << "names of compute modules and pipelines): probes are linked into their SPIR-V\n";
      for (const auto &type : pattern->types)
        for (const auto &name : shaders)
          if (vulkan_type(type))
            out << "spirv gpu:" << type << ":" << pasteable(name) << "\n";
    }
    return Ok{};
  }
  std::set<std::string> kernels; // the same kernel in two files is one probe point
  for (const auto &f : files)
    for (const auto &row : f.rows)
      kernels.insert(row.display);
  for (const auto &type : pattern->types) {
    std::set<std::string> listed = kernels;
    if (vulkan_type(type))
      listed.insert(shaders.begin(), shaders.end());
    for (const auto &k : listed)
      out << pattern->probe(type, pasteable(k)) << "\n";
  }
  return Ok{};
}

} // namespace gpubt::runtime
