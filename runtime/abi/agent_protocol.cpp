// The agent config (one directive per line, fields separated by tabs) and the results file
// (little-endian 64-bit words and byte blobs after a magic).
#include "runtime/abi/agent_protocol.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace gpubt::abi {
namespace {

constexpr char kResultsMagic[8] = {'G', 'P', 'U', 'B', 'T', 'R', 'S', '1'};
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

template <class T> bool to_uint(const std::string &s, T &v) {
  if (s.empty() || s[0] == '-')
    return false;
  char *end = nullptr;
  unsigned long long x = std::strtoull(s.c_str(), &end, 0);
  v = static_cast<T>(x);
  return *end == 0 && static_cast<unsigned long long>(v) == x;
}

bool to_int(const std::string &s, int &v) {
  if (s.empty())
    return false;
  char *end = nullptr;
  long x = std::strtol(s.c_str(), &end, 10);
  v = static_cast<int>(x);
  return *end == 0 && v == x;
}

// Each hostmap line names a device map whose slots hold the BPF map's key and value.
Status link_host_maps(AgentConfig &c) {
  for (const auto &h : c.host_maps) {
    if (h.device_map >= c.maps.size())
      return make_error("agent config: hostmap names device map " + std::to_string(h.device_map) +
                        " of " + std::to_string(c.maps.size()));
    DeviceMapSpec &m = c.maps[h.device_map];
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

struct Reader {
  const std::string &bytes;
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

std::string write_agent_config(const AgentConfig &c) {
  std::ostringstream o;
  o << "results\t" << c.results_path << "\n";
  o << "ring\t" << c.ring_capacity << "\n";
  for (const auto &cu : c.cubins)
    o << "cubin\t" << cu.arch << "\t" << cu.path << (cu.ptx.empty() ? "" : "\t" + cu.ptx) << "\n";
  if (!c.spirv_path.empty())
    o << "spirv\t" << c.spirv_path << "\n";
  o << "backend\t" << backend_name(c.backend) << "\n";
  for (const auto &p : c.probes)
    o << "probe\t" << (p.exit ? "exit" : "enter") << "\t" << p.function << "\t" << p.name << "\t"
      << p.kernel << "\n";
  for (const auto &m : c.maps)
    o << "map\t" << m.capacity << "\t" << m.key_size << "\t" << m.value_size << "\t" << m.entry_size
      << "\t" << m.buckets << (m.prefilled ? "\tprefilled" : "") << "\n";
  for (const auto &h : c.host_maps)
    o << "hostmap\t" << h.device_map << "\t" << h.key_size << "\t" << h.value_size << "\t" << h.fd
      << (h.to_host ? "\tto_host" : "") << "\n";
  if (c.events_fd >= 0)
    o << "events\t" << c.events_fd << "\n";
  if (c.verbose)
    o << "verbose\n";
  if (c.launch_state)
    o << "launchstate\n";
  if (c.clock)
    o << "clock\n";
  return o.str();
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
    const std::string &d = f[0];
    bool ok = true;
    if (d == "results" && f.size() == 2)
      c.results_path = f[1];
    else if (d == "ring" && f.size() == 2)
      ok = to_uint(f[1], c.ring_capacity);
    else if (d == "spirv" && f.size() == 2)
      c.spirv_path = f[1];
    else if (d == "cubin" && (f.size() == 3 || f.size() == 4))
      c.cubins.push_back({f[1], f[2], f.size() == 4 ? f[3] : "", ""});
    else if (d == "backend" && f.size() == 2)
      ok = parse_backend(f[1], c.backend);
    else if (d == "probe" && f.size() == 5 && (f[1] == "enter" || f[1] == "exit"))
      c.probes.push_back({f[3], f[4], f[1] == "exit", f[2]});
    else if (d == "map" && (f.size() == 6 || (f.size() == 7 && f[6] == "prefilled"))) {
      DeviceMapSpec m;
      ok = to_uint(f[1], m.capacity) && to_uint(f[2], m.key_size) && to_uint(f[3], m.value_size) &&
           to_uint(f[4], m.entry_size) && to_uint(f[5], m.buckets) &&
           m.entry_size >= 8 + m.key_size + m.value_size;
      m.prefilled = f.size() == 7;
      c.maps.push_back(m);
    } else if (d == "hostmap" && (f.size() == 5 || (f.size() == 6 && f[5] == "to_host"))) {
      AgentConfig::HostMap h;
      h.to_host = f.size() == 6;
      ok = to_uint(f[1], h.device_map) && to_uint(f[2], h.key_size) &&
           to_uint(f[3], h.value_size) && to_int(f[4], h.fd) && h.fd >= -1;
      c.host_maps.push_back(h);
    } else if (d == "events" && f.size() == 2)
      ok = to_uint(f[1], c.events_fd);
    else if (d == "verbose" && f.size() == 1)
      c.verbose = true;
    else if (d == "launchstate" && f.size() == 1)
      c.launch_state = true;
    else if (d == "clock" && f.size() == 1)
      c.clock = true;
    else
      ok = false;
    if (!ok)
      return make_error("agent config line " + std::to_string(lineno) + ": cannot parse '" + line +
                        "'");
  }
  if (auto st = link_host_maps(c); !st)
    return make_error(st.error());
  return c;
}

std::string write_agent_results(const AgentResults &r) {
  std::string out(kResultsMagic, sizeof kResultsMagic);
  put_u64(out, r.images.size());
  for (const auto &img : r.images) {
    put_u64(out, static_cast<uint64_t>(static_cast<int64_t>(img.device)));
    put_u64(out, img.probe_launches.size());
    for (uint64_t n : img.probe_launches)
      put_u64(out, n);
    put_u64(out, img.maps.size());
    for (const auto &m : img.maps)
      put_blob(out, m);
    put_blob(out, img.ring_records);
    put_u64(out, img.ring_drops);
  }
  put_u64(out, r.messages.size());
  for (const auto &m : r.messages)
    put_blob(out, m);
  return out;
}

Result<AgentResults> parse_agent_results(const std::string &bytes) {
  auto bad = [] { return make_error("the GPU agent's results file is truncated or corrupt"); };
  if (bytes.size() < sizeof kResultsMagic ||
      std::memcmp(bytes.data(), kResultsMagic, sizeof kResultsMagic) != 0)
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
      if (!r.blob(m))
        return bad();
    if (!r.blob(img.ring_records) || !r.u64(img.ring_drops))
      return bad();
    res.images.push_back(std::move(img));
  }
  if (!r.count(n))
    return bad();
  for (uint64_t i = 0; i < n; ++i) {
    std::vector<uint8_t> m;
    if (!r.blob(m))
      return bad();
    res.messages.emplace_back(m.begin(), m.end());
  }
  return res;
}

} // namespace gpubt::abi
