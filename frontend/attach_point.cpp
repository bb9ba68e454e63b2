// Splits an attach point on ':' (outside "quotes") and checks it against the provider table.
#include "frontend/attach_point.h"
#include "frontend/nearest_name.h"

#include <cctype>
#include <charconv>
#include <string_view>

namespace gpubt::frontend {
namespace {

struct ProviderRow {
  std::string_view name, alias;
  Provider provider;
  int args; // after the provider word(s)
};

// gpu probes are spelled with two words: gpu:kprobe:KERNEL.
const ProviderRow kProviders[] = {
    {"BEGIN", "begin", Provider::Begin, 0},      {"END", "end", Provider::End, 0},
    {"interval", "i", Provider::Interval, 2},    {"uprobe", "u", Provider::Uprobe, 2},
    {"uretprobe", "ur", Provider::Uretprobe, 2}, {"tracepoint", "t", Provider::Tracepoint, 2},
    {"gpu:kprobe", "", Provider::GpuKprobe, 1},  {"gpu:kretprobe", "", Provider::GpuKretprobe, 1},
    {"gpu:hang", "", Provider::GpuHang, 1},
    {"gpu:block_begin", "", Provider::GpuBlockBegin, 1},
    {"gpu:block_end", "", Provider::GpuBlockEnd, 1},
    {"gpu:mem", "", Provider::GpuMemory, 1},     {"gpu:load", "", Provider::GpuMemory, 1},
    {"gpu:store", "", Provider::GpuMemory, 1},   {"gpu:atomic", "", Provider::GpuMemory, 1},
    {"gpu:barrier", "", Provider::GpuBarrier, 1},
    {"kprobe", "k", Provider::Kprobe, 1},        {"kretprobe", "kr", Provider::Kretprobe, 1},
    {"profile", "p", Provider::Profile, 2},      {"usdt", "U", Provider::Usdt, 2},
    {"software", "s", Provider::Software, 2},    {"hardware", "h", Provider::Hardware, 2},
    {"watchpoint", "w", Provider::Watchpoint, 3},
    {"asyncwatchpoint", "aw", Provider::AsyncWatchpoint, 3},
};

// bpftrace probe types gpubt knows but does not trace.
const std::string_view kUnsupported[] = {
    "kfunc",
    "f",
    "kretfunc",
    "fr",
    "fentry",
    "fexit",
    "self",
    "bench",
    "test",
    "iter",
    "it",
    "rawtracepoint",
    "rt",
};

const struct {
  std::string_view unit;
  uint64_t ns_per, hz; // hz: the count is a frequency
} kIntervalUnits[] = {{"s", 1000000000, 0}, {"ms", 1000000, 0}, {"us", 1000, 0}, {"ns", 1, 0},
                      {"hz", 0, 1}};

std::vector<std::string> split(std::string_view raw) {
  std::vector<std::string> parts(1);
  bool quoted = false;
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (quoted && c == '\\' && i + 1 < raw.size() && raw[i + 1] == '"')
      parts.back() += raw[++i]; // a quote inside quotes: usdt:./app:"\"probe\""
    else if (c == '"')
      quoted = !quoted;
    else if (c == ':' && !quoted)
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

std::string join(const std::vector<std::string> &parts, size_t from) {
  std::string out;
  for (size_t i = from; i < parts.size(); ++i)
    out += (i > from ? ":" : "") + parts[i];
  return out;
}

const ProviderRow *find_provider(const std::vector<std::string> &parts, size_t &words) {
  for (const auto &row : kProviders) {
    bool two = row.name.find(':') != std::string_view::npos;
    std::string word = two && parts.size() > 1 ? parts[0] + ":" + parts[1] : parts[0];
    if (word == row.name || (!row.alias.empty() && word == row.alias)) {
      words = two ? 2 : 1;
      return &row;
    }
  }
  return nullptr;
}

// interval:UNIT:COUNT, or (UNIT empty) interval:COUNTUNIT and interval:COUNT in nanoseconds.
bool set_interval(AttachPoint &ap, std::string unit, std::string count, Diagnostics &diags) {
  if (unit.empty() && ap.provider == Provider::Interval) {
    size_t digits = count.find_first_not_of("0123456789");
    unit = digits == std::string::npos ? "ns" : count.substr(digits);
    count = count.substr(0, digits);
  }
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
  for (const auto &u : kIntervalUnits) {
    if (u.unit != unit)
      continue;
    if (ec != std::errc() || end != count.data() + count.size() || n == 0) {
      diags.error(ap.span, "interval: invalid count '" + count + "', expected a positive integer");
      return false;
    }
    if (u.hz) {
      ap.interval_ns = 1000000000 / n ? 1000000000 / n : 1;
      return true;
    }
    if (__builtin_mul_overflow(n, u.ns_per, &ap.interval_ns)) {
      diags.error(ap.span, "interval: " + count + unit + " is too long");
      return false;
    }
    return true;
  }
  diags.error(ap.span, unit + " is not an accepted unit of time");
  return false;
}

// usdt:FILE:NAME or usdt:FILE:PROVIDER:NAME; FILE may be empty with -p (every file the process
// maps), PROVIDER empty (any).
bool set_usdt(AttachPoint &ap, const std::vector<std::string> &parts, Diagnostics &diags) {
  if (parts.size() != 3 && parts.size() != 4) {
    diags.error(ap.span, "usdt probe type requires 2 or 3 arguments");
    return false;
  }
  ap.target = parts[1];
  ap.ns = parts.size() == 4 ? parts[2] : "";
  ap.func = parts.back();
  if (ap.func.empty()) {
    diags.error(ap.span, "usdt probe type requires a probe name");
    return false;
  }
  return true;
}

bool parse_u64(const std::string &s, uint64_t &v) {
  bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const char *first = s.data() + (hex ? 2 : 0), *last = s.data() + s.size();
  auto [end, ec] = std::from_chars(first, last, v, hex ? 16 : 10);
  return !s.empty() && ec == std::errc() && end == last;
}

// watchpoint:ADDRESS:LEN:MODE or watchpoint:FUNC+argN:LEN:MODE, with bpftrace's checks.
bool set_watchpoint(AttachPoint &ap, const std::string &type, const std::string &where,
                    const std::string &len, const std::string &mode, Diagnostics &diags) {
  auto fail = [&](const std::string &msg) {
    diags.error(ap.span, msg);
    return false;
  };
  auto plus = where.rfind("+arg");
  if (plus != std::string::npos && plus > 0) {
    uint64_t n = 0;
    if (!parse_u64(where.substr(plus + 4), n) || n > 5)
      return fail(type + ": invalid function argument '" + where.substr(plus + 1) + "'");
    ap.func = where.substr(0, plus);
    ap.watch.arg = int(n);
  } else if (!parse_u64(where, ap.watch.address)) {
    return fail(type + ": invalid address '" + where + "'");
  }
  uint64_t n = 0;
  if (!parse_u64(len, n) || (n != 1 && n != 2 && n != 4 && n != 8))
    return fail(type + " length must be one of (1,2,4,8)");
  ap.watch.length = uint32_t(n);
  bool seen[3] = {};
  for (char c : mode) {
    auto at = std::string_view("rwx").find(c);
    if (at == std::string_view::npos || seen[at])
      return fail(type + " mode must be combination of (r,w,x)");
    seen[at] = true;
  }
  if (mode.empty())
    return fail(type + " mode must be combination of (r,w,x)");
  ap.watch.mode = mode;
  return true;
}

// software:EVENT[:COUNT] (an empty or absent COUNT: the event's default period).
bool set_perf_event(AttachPoint &ap, const std::string &type, const std::vector<std::string> &parts,
                    Diagnostics &diags) {
  if ((parts.size() != 2 && parts.size() != 3) || parts[1].empty()) {
    diags.error(ap.span, type + " probe type requires 1 or 2 arguments");
    return false;
  }
  ap.target = parts[1];
  ap.func = parts.size() == 3 ? parts[2] : "";
  if (ap.func.empty())
    return true;
  auto [end, ec] = std::from_chars(ap.func.data(), ap.func.data() + ap.func.size(), ap.interval_ns);
  if (ec != std::errc() || end != ap.func.data() + ap.func.size() || ap.interval_ns == 0) {
    diags.error(ap.span, type + ": invalid count '" + ap.func + "', expected a positive integer");
    return false;
  }
  return true;
}

// gpu:hang:KERNEL[:DURATION]: a last part that starts with a digit is the duration (no C++ or
// PTX name does), "500ms", "3s"; the kernel pattern keeps its "::".
bool set_hang(AttachPoint &ap, std::vector<std::string> parts, size_t words, Diagnostics &diags) {
  ap.interval_ns = 2'000'000'000; // the default: 2s
  if (parts.size() > words + 1 && !parts.back().empty() && std::isdigit(uint8_t(parts.back()[0]))) {
    std::string text = parts.back();
    size_t digits = text.find_first_not_of("0123456789");
    std::string count = text.substr(0, digits), unit = digits == text.npos ? "" : text.substr(digits);
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
    bool known = unit == "s" || unit == "ms" || unit == "us" || unit == "ns";
    if (!known || ec != std::errc() || n == 0) {
      diags.error(ap.span, "gpu:hang: invalid duration '" + text +
                               "', expected a positive count and a unit (s, ms, us, ns): 500ms, 3s");
      return false;
    }
    if (!set_interval(ap, unit, count, diags))
      return false;
    ap.target = text;
    parts.pop_back();
  }
  ap.func = join(parts, words);
  return true;
}

// gpu:load[:SPACE]:KERNEL: the access word in target, a SPACE (global, shared, local) followed by
// a kernel pattern in ns; `gpu:load:global` alone names a kernel called global.
void set_memory_space(AttachPoint &ap, std::vector<std::string> &parts, size_t &words) {
  ap.target = parts[1];
  if (parts.size() > words + 1 &&
      (parts[words] == "global" || parts[words] == "shared" || parts[words] == "local")) {
    ap.ns = parts[words];
    ++words;
  }
}

// The probe type names (and aliases) a misspelling may be near: gpu's second words after "gpu:".
std::vector<std::string> type_names(bool gpu) {
  std::vector<std::string> names;
  for (const auto &row : kProviders) {
    bool two = row.name.substr(0, 4) == "gpu:";
    if (two == gpu)
      names.emplace_back(gpu ? row.name.substr(4) : row.name);
    if (!gpu && !row.alias.empty())
      names.emplace_back(row.alias);
  }
  if (!gpu)
    names.emplace_back("gpu");
  return names;
}

// An unknown probe type, at the word that names it: `gpu:kprob:k` blames `kprob`.
void report_invalid_type(AttachPoint &ap, const std::vector<std::string> &parts,
                         Diagnostics &diags) {
  bool gpu = parts[0] == "gpu" && parts.size() > 1;
  const std::string &word = gpu ? parts[1] : parts[0];
  SourceSpan at = ap.span;
  at.col += (ap.host_prefix ? 5 : 0) + (gpu ? 4 : 0);
  at.end_line = at.line;
  at.end_col = at.col + uint32_t(word.size());
  std::string near = did_you_mean(word, type_names(gpu));
  if (gpu)
    diags.error(at, "Invalid gpu probe type: " + word +
                        (near.empty() ? " (gpu probes are gpu:kprobe, gpu:kretprobe, "
                                        "gpu:block_begin, gpu:block_end, gpu:hang, gpu:mem, "
                                        "gpu:load, gpu:store, gpu:atomic and gpu:barrier)"
                                      : near));
  else
    diags.error(at, "Invalid probe type: " + word + near);
}

} // namespace

bool parse_attach_point(AttachPoint &ap, Diagnostics &diags) {
  std::vector<std::string> parts = split(ap.raw);
  if (parts.size() > 1 && parts[0] == "host") {
    ap.host_prefix = true;
    parts.erase(parts.begin());
  }
  size_t words = 1;
  const ProviderRow *row = find_provider(parts, words);
  if (!row) {
    for (auto u : kUnsupported)
      if (parts[0] == u) {
        diags.error(ap.span, parts[0] + " probes are not supported by gpubt");
        return false;
      }
    report_invalid_type(ap, parts, diags);
    return false;
  }
  ap.provider = row->provider;
  std::string type(row->name);
  if (ap.host_prefix && (is_gpu(row->provider) || row->provider == Provider::GpuHang)) {
    diags.error(ap.span, "host: cannot prefix a gpu probe");
    return false;
  }
  if (row->provider == Provider::GpuMemory)
    set_memory_space(ap, parts, words);
  size_t args = parts.size() - words;
  if (row->provider == Provider::Usdt)
    return set_usdt(ap, parts, diags);
  if (row->provider == Provider::Software || row->provider == Provider::Hardware)
    return set_perf_event(ap, type, parts, diags);
  // C++ function names keep their "::" (uprobe:./app:ns::f), so uprobes and gpu kernels
  // take every remaining part as the function.
  bool cxx_func = row->provider == Provider::Uprobe || row->provider == Provider::Uretprobe ||
                  is_gpu(row->provider) || row->provider == Provider::GpuHang;
  bool arity_ok = args == size_t(row->args) || (cxx_func && args > size_t(row->args)) ||
                  (row->provider == Provider::Interval && args == 1);
  bool empty = false;
  for (size_t i = words; i < parts.size(); ++i)
    empty |= parts[i].empty() && !(cxx_func && i >= words + row->args);
  if (!arity_ok || (row->args > 0 && empty)) {
    diags.error(ap.span, type + " probe type requires " + std::to_string(row->args) + " argument" +
                             (row->args == 1 ? "" : "s"));
    return false;
  }
  if (row->provider == Provider::GpuHang)
    return set_hang(ap, parts, words, diags);
  if (is_watchpoint(row->provider))
    return set_watchpoint(ap, type, parts[words], parts[words + 1], parts[words + 2], diags);
  switch (row->args) {
  case 0:
    return true;
  case 1:
    ap.func = join(parts, words);
    return true;
  default:
    if (row->provider == Provider::Interval && args == 1) // interval:1s, interval:100 (ns)
      return set_interval(ap, "", parts[words], diags);
    if (row->provider == Provider::Interval || row->provider == Provider::Profile) {
      if (row->provider == Provider::Profile) { // named as written: profile:hz:99
        ap.target = parts[words];
        ap.func = parts[words + 1];
      }
      return set_interval(ap, parts[words], parts[words + 1], diags);
    }
    ap.target = parts[words];
    ap.func = join(parts, words + 1);
    return true;
  }
}

} // namespace gpubt::frontend
