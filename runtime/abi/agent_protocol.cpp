// The agent config (one directive per line, fields separated by tabs) and the results file
// (little-endian 64-bit words and byte blobs after a magic).
#include "runtime/abi/agent_protocol.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string_view>
#include <type_traits>

namespace gpubt::abi {
namespace {

constexpr char kResultsMagic[8] = {'G', 'P', 'U', 'B', 'T', 'R', 'S', '1'};
// The same, each map image sparse: its size, then its runs of words not all zero (live maps:
// a keyed map of 64 MiB mostly empty slots was sent whole every live period).
constexpr char kSparseResultsMagic[8] = {'G', 'P', 'U', 'B', 'T', 'R', 'S', '2'};
// Zero words between two runs that still join them (fewer, longer runs).
constexpr size_t kJoinZeroWords = 8;
constexpr uint64_t kMaxCount = 1u << 20; // sanity bound on counts read from the results file

std::vector<std::string> split_tabs(const std::string &line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos)
      return out;
    start = tab + 1;
  }
}

template <class T> bool to_number(const std::string &s, T &v) {
  if (s.empty() || (std::is_unsigned_v<T> && s[0] == '-'))
    return false;
  char *end = nullptr;
  errno = 0;
  if constexpr (std::is_unsigned_v<T>) {
    unsigned long long x = std::strtoull(s.c_str(), &end, 0);
    v = static_cast<T>(x);
    return errno == 0 && *end == 0 && static_cast<unsigned long long>(v) == x;
  } else {
    long long x = std::strtoll(s.c_str(), &end, 10);
    v = static_cast<T>(x);
    return errno == 0 && *end == 0 && static_cast<long long>(v) == x;
  }
}

// THE list of what the config says: each directive's name and fields, in order. The writer and
// the parser below both walk it, so a new field is one line here. A directive's fields:
// field (a value; a probe point as its word), optional (a trailing string, absent when empty),
// flag (a trailing word, present when true).
template <class V> void fields(V &v, AgentCubin &c) {
  v.field(c.arch);
  v.field(c.path);
  v.optional(c.ptx);
}
template <class V> void fields(V &v, DeviceProbeSpec &p) {
  v.field(p.point);
  v.field(p.function);
  v.field(p.name);
  v.field(p.kernel);
  v.optional(p.patch);
}
template <class V> void fields(V &v, DeviceMapSpec &m) {
  v.field(m.capacity);
  v.field(m.key_size);
  v.field(m.value_size);
  v.field(m.entry_size);
  v.field(m.buckets);
  v.flag(m.prefilled, "prefilled");
}
template <class V> void fields(V &v, AgentConfig::HostMap &h) {
  v.field(h.device_map);
  v.field(h.key_size);
  v.field(h.value_size);
  v.field(h.fd);
  v.flag(h.to_host, "to_host");
}
template <class V> void directives(V &v, AgentConfig &c) {
  v.one("results", c.results_path);
  v.one("ring", c.device.ring_capacity);
  v.each("cubin", c.cubins);
  v.one("spirv", c.spirv_path);
  v.one("backend", c.backend);
  v.each("probe", c.device.probes);
  v.each("map", c.device.maps);
  v.each("hostmap", c.host_maps); // after the maps: a line names one by index
  v.one("events", c.events_fd);
  v.one("verbose", c.verbose);
  v.one("live", c.live_ms);
  v.one("livefd", c.live_fd);
  v.one("watch", c.watch_launches);
  v.one("time", c.time_launches);
  v.one("timecalls", c.time_launch_calls);
  v.one("launchstate", c.device.launch_state);
  v.one("features", c.device.features);
  v.one("listkernels", c.list_kernels);
}

// What a parsed line must also satisfy.
template <class T> bool valid(const T &) { return true; }
bool valid(const DeviceMapSpec &m) { return m.entry_size >= 8 + m.key_size + m.value_size; }
bool valid(const AgentConfig::HostMap &h) { return h.fd >= -1; }

// One line's fields after its directive name.
struct FieldWriter {
  std::string &line;
  void field(const std::string &s) { (line += '\t') += s; }
  void field(GpuBackend b) { field(std::string(backend_name(b))); }
  void field(const ProbePoint &p) { field(probe_point_text(p)); }
  template <class T> void field(T v) { field(std::to_string(v)); }
  void optional(const std::string &s) {
    if (!s.empty())
      field(s);
  }
  void flag(bool v, const char *word) {
    if (v)
      field(std::string(word));
  }
};
struct ConfigWriter {
  std::string out;
  template <class T> void one(const char *name, T &v) {
    std::string line = name;
    FieldWriter{line}.field(v);
    (out += line) += '\n';
  }
  template <class T> void each(const char *name, std::vector<T> &items) {
    for (auto &item : items) {
      std::string line = name;
      FieldWriter w{line};
      fields(w, item);
      (out += line) += '\n';
    }
  }
};

struct FieldReader {
  const std::vector<std::string> &f;
  size_t at = 1; // f[0] is the directive
  bool ok = true;
  const std::string *next() {
    if (at < f.size())
      return &f[at++];
    ok = false;
    return nullptr;
  }
  void field(std::string &s) {
    if (auto *x = next())
      s = *x;
  }
  void field(GpuBackend &b) {
    auto *x = next();
    ok = ok && parse_backend(*x, b);
  }
  void field(ProbePoint &p) {
    auto *x = next();
    ok = ok && parse_probe_point(*x, p);
  }
  template <class T> void field(T &v) {
    auto *x = next();
    ok = ok && to_number(*x, v);
  }
  void field(bool &v) {
    auto *x = next();
    ok = ok && (*x == "0" || *x == "1");
    v = ok && *x == "1";
  }
  void optional(std::string &s) {
    if (at < f.size())
      s = f[at++];
  }
  void flag(bool &v, const char *word) {
    v = at < f.size() && f[at] == word;
    at += v;
  }
  bool complete() const { return ok && at == f.size(); }
};
struct LineParser {
  const std::vector<std::string> &f;
  bool known = false, ok = false;
  template <class T> void one(const char *name, T &v) {
    if (known || f[0] != name)
      return;
    known = true;
    FieldReader r{f};
    r.field(v);
    ok = r.complete();
  }
  template <class T> void each(const char *name, std::vector<T> &items) {
    if (known || f[0] != name)
      return;
    known = true;
    T item{};
    FieldReader r{f};
    fields(r, item);
    ok = r.complete() && valid(item);
    if (ok)
      items.push_back(std::move(item));
  }
};

// Each hostmap line names a device map whose slots hold the BPF map's key and value.
Status link_host_maps(AgentConfig &c) {
  for (const auto &h : c.host_maps) {
    if (h.device_map >= c.device.maps.size())
      return make_error("agent config: hostmap names device map " + std::to_string(h.device_map) +
                        " of " + std::to_string(c.device.maps.size()));
    DeviceMapSpec &m = c.device.maps[h.device_map];
    if (m.from_host || m.to_host)
      return make_error("agent config: two hostmap lines for device map " +
                        std::to_string(h.device_map));
    if ((m.key_size && h.key_size > m.key_size) || h.value_size > m.value_size)
      return make_error("agent config: hostmap " + std::to_string(h.device_map) +
                        " does not fit its device map's slots");
    (h.to_host ? m.to_host : m.from_host) = true;
  }
  return Ok{};
}

void put_u64(std::string &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>(v >> (8 * i) & 0xff);
}
template <class Bytes> void put_blob(std::string &out, const Bytes &b) {
  put_u64(out, b.size());
  out.append(reinterpret_cast<const char *>(b.data()), b.size());
}

// B's size, its count of runs, then each run's offset and bytes: every 8-byte word (the last
// one possibly shorter) that is not all zero is in a run.
void put_sparse_blob(std::string &out, const std::vector<uint8_t> &b) {
  put_u64(out, b.size());
  size_t count_at = out.size();
  put_u64(out, 0);
  uint64_t runs = 0;
  auto zero_word = [&](size_t at) {
    size_t n = std::min<size_t>(8, b.size() - at);
    uint64_t w = 0;
    std::memcpy(&w, b.data() + at, n);
    return w == 0;
  };
  size_t at = 0;
  while (at < b.size()) {
    while (at < b.size() && zero_word(at))
      at += 8;
    if (at >= b.size())
      break;
    size_t start = at, zeros = 0;
    for (; at < b.size() && zeros <= kJoinZeroWords; at += 8)
      zeros = zero_word(at) ? zeros + 1 : 0;
    size_t end = std::min(b.size(), at - 8 * zeros);
    put_u64(out, start);
    put_blob(out, std::string_view(reinterpret_cast<const char *>(b.data()) + start, end - start));
    ++runs;
  }
  for (int i = 0; i < 8; ++i)
    out[count_at + i] = static_cast<char>(runs >> (8 * i) & 0xff);
}

// A sparse map image's largest size (the 64 MiB a default map is kept under, many times over).
constexpr uint64_t kMaxSparseBytes = uint64_t(1) << 34;

struct Reader {
  std::string_view bytes;
  size_t pos = 0;
  bool u64(uint64_t &v) {
    if (bytes.size() - pos < 8)
      return false;
    v = 0;
    for (int i = 0; i < 8; ++i)
      v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[pos + i])) << (8 * i);
    pos += 8;
    return true;
  }
  bool count(uint64_t &v) { return u64(v) && v <= kMaxCount; }
  bool blob(std::vector<uint8_t> &out) {
    uint64_t n;
    if (!u64(n) || bytes.size() - pos < n)
      return false;
    out.assign(bytes.begin() + pos, bytes.begin() + pos + n);
    pos += n;
    return true;
  }
  // put_sparse_blob's: runs in order, inside the size, not overlapping.
  bool sparse_blob(std::vector<uint8_t> &out) {
    uint64_t size, runs, end = 0;
    if (!u64(size) || !u64(runs) || size > kMaxSparseBytes || runs > (bytes.size() - pos) / 16)
      return false;
    out.assign(size, 0);
    for (uint64_t i = 0; i < runs; ++i) {
      uint64_t offset, n;
      if (!u64(offset) || !u64(n) || offset < end || offset > size || n > size - offset ||
          bytes.size() - pos < n)
        return false;
      std::memcpy(out.data() + offset, bytes.data() + pos, n);
      pos += n;
      end = offset + n;
    }
    return true;
  }
  // A count and that many blobs, each put at OUT's end as a string.
  template <class Strings> bool strings(Strings &out) {
    uint64_t n;
    if (!count(n))
      return false;
    for (uint64_t i = 0; i < n; ++i) {
      std::vector<uint8_t> b;
      if (!blob(b))
        return false;
      out.insert(out.end(), std::string(b.begin(), b.end()));
    }
    return true;
  }
};

} // namespace

const char *backend_name(GpuBackend b) {
  return b == GpuBackend::Ptx ? "ptx" : b == GpuBackend::Sass ? "sass" : "auto";
}

bool parse_backend(const std::string &name, GpuBackend &out) {
  for (GpuBackend b : {GpuBackend::Auto, GpuBackend::Ptx, GpuBackend::Sass})
    if (name == backend_name(b)) {
      out = b;
      return true;
    }
  return false;
}

std::vector<AgentConfig::HostMap> host_maps_of(const ProgramSpec &spec) {
  std::vector<AgentConfig::HostMap> out;
  for (size_t i = 0; i < spec.device.maps.size(); ++i) {
    const auto &d = spec.device.maps[i];
    if (!(d.from_host || d.to_host) || d.map_index < 0 || size_t(d.map_index) >= spec.maps.size())
      continue;
    const auto &host = spec.maps[d.map_index];
    out.push_back({uint32_t(i), host.key_size, host.value_size, -1, d.to_host});
  }
  return out;
}

DeviceProgramSpec device_spec_for_agent(const DeviceProgramSpec &spec) {
  DeviceProgramSpec out;
  out.probes = spec.probes;
  out.maps = spec.maps;
  out.ring_capacity = spec.ring_capacity;
  out.launch_state = spec.launch_state;
  out.features = spec.features;
  return out;
}

std::string write_agent_config(const AgentConfig &c) {
  ConfigWriter w;
  directives(w, const_cast<AgentConfig &>(c)); // the writer only reads
  return w.out;
}

Result<AgentConfig> parse_agent_config(const std::string &text) {
  AgentConfig c;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#')
      continue;
    auto f = split_tabs(line);
    LineParser p{f};
    directives(p, c);
    if (!p.ok)
      return make_error("agent config line " + std::to_string(lineno) + ": cannot parse '" + line +
                        "'");
  }
  // A config without patch functions (one written by hand, or by a gpubt before probe points)
  // patches each probe's own function.
  for (auto &probe : c.device.probes)
    if (probe.patch.empty())
      probe.patch = probe.function;
  if (auto st = link_host_maps(c); !st)
    return make_error(st.error());
  return c;
}

namespace {

void put_images(std::string &out, const std::vector<DeviceImage> &images, bool sparse) {
  put_u64(out, images.size());
  for (const auto &img : images) {
    put_u64(out, static_cast<uint64_t>(static_cast<int64_t>(img.device)));
    put_u64(out, img.probe_launches.size());
    for (uint64_t n : img.probe_launches)
      put_u64(out, n);
    put_u64(out, img.maps.size());
    for (const auto &m : img.maps)
      sparse ? put_sparse_blob(out, m) : put_blob(out, m);
    put_blob(out, img.ring_records);
    put_u64(out, img.ring_drops);
  }
}

} // namespace

std::string write_sparse_images(const std::vector<DeviceImage> &images) {
  std::string out(kSparseResultsMagic, sizeof kSparseResultsMagic);
  put_images(out, images, true);
  put_u64(out, 0); // no messages
  return out;
}

std::string write_agent_results(const AgentResults &r) {
  std::string out(kResultsMagic, sizeof kResultsMagic);
  put_images(out, r.images, false);
  put_u64(out, r.messages.size());
  for (const auto &m : r.messages)
    put_blob(out, m);
  put_u64(out, r.kernel_names.size());
  for (const auto &[shortened, full] : r.kernel_names) {
    put_blob(out, shortened);
    put_blob(out, full);
  }
  put_u64(out, r.untraced);
  put_u64(out, r.kernels.size());
  for (const auto &k : r.kernels)
    put_blob(out, k);
  return out;
}

bool some_probe_unmatched(const std::vector<DeviceImage> &images, size_t probes) {
  std::vector<uint64_t> launches(probes);
  for (const auto &img : images)
    for (size_t i = 0; i < img.probe_launches.size() && i < probes; ++i)
      launches[i] += img.probe_launches[i];
  return std::find(launches.begin(), launches.end(), 0) != launches.end();
}

Result<AgentResults> parse_agent_results(std::string_view bytes) {
  auto bad = [] { return make_error("the GPU agent's results file is truncated or corrupt"); };
  auto magic = [&](const char (&m)[8]) {
    return bytes.size() >= sizeof m && std::memcmp(bytes.data(), m, sizeof m) == 0;
  };
  bool sparse = magic(kSparseResultsMagic);
  if (!sparse && !magic(kResultsMagic))
    return bad();
  Reader r{bytes, sizeof kResultsMagic};
  AgentResults res;
  uint64_t nimages, n;
  if (!r.count(nimages))
    return bad();
  for (uint64_t i = 0; i < nimages; ++i) {
    DeviceImage img;
    uint64_t device;
    if (!r.u64(device) || !r.count(n))
      return bad();
    img.device = static_cast<int32_t>(device);
    img.probe_launches.resize(n);
    for (auto &x : img.probe_launches)
      if (!r.u64(x))
        return bad();
    if (!r.count(n))
      return bad();
    img.maps.resize(n);
    for (auto &m : img.maps)
      if (!(sparse ? r.sparse_blob(m) : r.blob(m)))
        return bad();
    if (!r.blob(img.ring_records) || !r.u64(img.ring_drops))
      return bad();
    res.images.push_back(std::move(img));
  }
  if (!r.strings(res.messages))
    return bad();
  if (r.pos == bytes.size())
    return res; // an older agent's results
  if (!r.count(n))
    return bad();
  for (uint64_t i = 0; i < n; ++i) {
    std::vector<uint8_t> shortened, full;
    if (!r.blob(shortened) || !r.blob(full))
      return bad();
    res.kernel_names[std::string(shortened.begin(), shortened.end())] =
        std::string(full.begin(), full.end());
  }
  if (r.pos == bytes.size())
    return res; // an agent's results from before the untraced count
  if (!r.u64(res.untraced))
    return bad();
  if (r.pos == bytes.size())
    return res; // an agent's results from before the kernels loaded
  if (!r.strings(res.kernels))
    return bad();
  return res;
}

} // namespace gpubt::abi
