#include "runtime/abi/live_maps.h"

#include <cstring>

#include "runtime/abi/agent_records.h"

namespace gpubt::abi {

std::string live_maps_record(uint32_t pid, const AgentResults &images) {
  AgentResults maps;
  maps.images = images.images;
  std::string results = write_agent_results(maps);
  std::string payload(16, '\0'); // the pid and the results' length, then the results
  uint64_t words[2] = {pid, results.size()};
  std::memcpy(payload.data(), words, sizeof words);
  return agent_record(EventKind::LiveMaps, payload + results);
}

bool is_live_maps_record(const uint8_t *bytes, size_t size) {
  return is_agent_record(EventKind::LiveMaps, bytes, size);
}

Status LiveMaps::take_from(std::vector<uint8_t> &records) {
  return take_agent_records(records, EventKind::LiveMaps, [&](const uint8_t *p, size_t size) {
    uint64_t words[2];
    if (size < 16 || (std::memcpy(words, p, sizeof words), words[1] > size - 16))
      return std::string("a live GPU map record shorter than it says");
    auto parsed = parse_agent_results(std::string(reinterpret_cast<const char *>(p) + 16, words[1]));
    if (!parsed)
      return "a live GPU map record that does not parse: " + parsed.error();
    latest_[static_cast<uint32_t>(words[0])] = std::move(*parsed);
    ++taken_;
    return std::string();
  });
}

AgentResults LiveMaps::results() const {
  AgentResults all;
  for (const auto &[pid, r] : latest_)
    all.images.insert(all.images.end(), r.images.begin(), r.images.end());
  return all;
}

} // namespace gpubt::abi
