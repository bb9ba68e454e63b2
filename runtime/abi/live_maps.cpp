#include "runtime/abi/live_maps.h"

#include <cstring>

#include "runtime/abi/device_abi.h"
#include "runtime/abi/program_spec.h"

namespace gpubt::abi {
namespace {

constexpr size_t kHead = sizeof(gpubt_ring_record) + sizeof(EventHeader);

} // namespace

std::string live_maps_record(uint32_t pid, const AgentResults &images) {
  AgentResults maps;
  maps.images = images.images;
  std::string results = write_agent_results(maps);
  std::string out(kHead + 16, '\0'); // then the pid and the results' length
  uint64_t words[2] = {pid, results.size()};
  std::memcpy(out.data() + kHead, words, sizeof words);
  out += results;
  out.resize((out.size() + 7) / 8 * 8, '\0');
  gpubt_ring_record r{static_cast<uint32_t>(out.size()), 0};
  EventHeader h{static_cast<uint32_t>(EventKind::LiveMaps), 0};
  std::memcpy(out.data(), &r, sizeof r);
  std::memcpy(out.data() + sizeof r, &h, sizeof h);
  return out;
}

bool is_live_maps_record(const uint8_t *bytes, size_t size) {
  if (size < kHead)
    return false;
  gpubt_ring_record r;
  EventHeader h;
  std::memcpy(&r, bytes, sizeof r);
  std::memcpy(&h, bytes + sizeof r, sizeof h);
  return r.size == size && h.kind == uint32_t(EventKind::LiveMaps);
}

Status LiveMaps::take_from(std::vector<uint8_t> &records) {
  // In place: the records are compacted over the LiveMaps ones, so a stream of printf records
  // (an agent may send hundreds of MiB) is never copied.
  std::string error;
  size_t pos = 0, kept = 0;
  while (records.size() - pos >= kHead) {
    gpubt_ring_record r;
    EventHeader h;
    std::memcpy(&r, records.data() + pos, sizeof r);
    std::memcpy(&h, records.data() + pos + sizeof r, sizeof h);
    if (r.size < kHead || r.size > records.size() - pos)
      break; // cut short (or not a record: left for the printer, which stops there too)
    const uint8_t *payload = records.data() + pos + kHead;
    if (h.kind != uint32_t(EventKind::LiveMaps)) {
      if (kept != pos)
        std::memmove(records.data() + kept, records.data() + pos, r.size);
      kept += r.size;
    } else if (uint64_t words[2]; r.size < kHead + 16 ||
               (std::memcpy(words, payload, sizeof words), words[1] > r.size - kHead - 16)) {
      error = "a live GPU map record shorter than it says";
    } else {
      auto parsed = parse_agent_results(
          std::string(reinterpret_cast<const char *>(payload) + 16, words[1]));
      if (parsed) {
        latest_[static_cast<uint32_t>(words[0])] = std::move(*parsed);
        ++taken_;
      } else
        error = "a live GPU map record that does not parse: " + parsed.error();
    }
    pos += r.size;
  }
  if (kept != pos)
    records.erase(records.begin() + kept, records.begin() + pos);
  if (!error.empty())
    return make_error(error);
  return Ok{};
}

AgentResults LiveMaps::results() const {
  AgentResults all;
  for (const auto &[pid, r] : latest_)
    all.images.insert(all.images.end(), r.images.begin(), r.images.end());
  return all;
}

} // namespace gpubt::abi
