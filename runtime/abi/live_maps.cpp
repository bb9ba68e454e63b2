#include "runtime/abi/live_maps.h"

#include <chrono>
#include <cstring>

#include "runtime/abi/agent_records.h"

namespace gpubt::abi {

std::string live_maps_record(uint32_t pid, const AgentResults &images, uint64_t copied_ns) {
  std::string results = write_sparse_images(images.images);
  // The pid and the results' length, then the results, then the copy's time.
  std::string payload(16, '\0');
  uint64_t words[2] = {pid, results.size()};
  std::memcpy(payload.data(), words, sizeof words);
  std::string time(8, '\0');
  std::memcpy(time.data(), &copied_ns, sizeof copied_ns);
  return agent_record(EventKind::LiveMaps, payload + results + time);
}

uint64_t live_clock_ns() {
  // libstdc++'s steady_clock is CLOCK_MONOTONIC, the agents' and the tracer's clock.
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

bool is_live_maps_record(const uint8_t *bytes, size_t size) {
  return is_agent_record(EventKind::LiveMaps, bytes, size);
}

Status LiveMaps::take_from(std::vector<uint8_t> &records) {
  return take_agent_records(records, EventKind::LiveMaps, [&](const uint8_t *p, size_t size) {
    uint64_t words[2];
    if (size < 16 || (std::memcpy(words, p, sizeof words), words[1] > size - 16))
      return std::string("a live GPU map record shorter than it says");
    auto parsed = parse_agent_results(std::string_view(reinterpret_cast<const char *>(p) + 16, words[1]));
    if (!parsed)
      return "a live GPU map record that does not parse: " + parsed.error();
    uint64_t copied = 0;
    if (size - 16 - words[1] >= sizeof copied)
      std::memcpy(&copied, p + 16 + words[1], sizeof copied);
    uint32_t pid = static_cast<uint32_t>(words[0]);
    latest_[pid] = std::move(*parsed);
    copied_ns_[pid] = copied;
    ++taken_;
    return std::string();
  });
}

uint64_t LiveMaps::copied_ns(uint32_t pid) const {
  auto it = copied_ns_.find(pid);
  return it == copied_ns_.end() ? 0 : it->second;
}

AgentResults LiveMaps::results() const {
  AgentResults all;
  for (const auto &[pid, r] : latest_)
    all.images.insert(all.images.end(), r.images.begin(), r.images.end());
  return all;
}

} // namespace gpubt::abi
