#include "runtime/abi/finished_launches.h"

#include <cstring>

#include "runtime/abi/agent_records.h"

namespace gpubt::abi {
namespace {

// Fixed-size part of an entry, then the kernel name's bytes.
struct Entry {
  uint64_t seq, stream, start_ns, end_ns, call_ns;
  uint32_t grid[3], block[3];
  uint32_t device, name_size;
};
struct Head {
  uint64_t pid, lost, count;
};

} // namespace

std::string finished_launches_record(const FinishedLaunches &r) {
  Head head{r.pid, r.lost, r.launches.size()};
  std::string payload(reinterpret_cast<const char *>(&head), sizeof head);
  for (const auto &l : r.launches) {
    Entry e{l.seq, l.stream, l.start_ns, l.end_ns, l.call_ns, {}, {}, l.device,
            static_cast<uint32_t>(l.kernel.size())};
    std::memcpy(e.grid, l.grid, sizeof e.grid);
    std::memcpy(e.block, l.block, sizeof e.block);
    payload.append(reinterpret_cast<const char *>(&e), sizeof e);
    payload += l.kernel;
  }
  return agent_record(EventKind::FinishedLaunches, payload);
}

Status take_finished_launches(std::vector<uint8_t> &records,
                              const std::function<void(const FinishedLaunches &)> &each) {
  return take_agent_records(records, EventKind::FinishedLaunches, [&](const uint8_t *p,
                                                                      size_t size) {
    PayloadReader in(p, size);
    Head head;
    if (!in.read(head))
      return std::string("a finished launches record shorter than its header");
    FinishedLaunches r{static_cast<uint32_t>(head.pid), head.lost, {}};
    for (uint64_t i = 0; i < head.count; ++i) {
      Entry e;
      FinishedLaunch l;
      if (!in.read(e) || !in.read_string(l.kernel, e.name_size))
        return std::string("a finished launches record shorter than it says");
      l.seq = e.seq, l.stream = e.stream, l.start_ns = e.start_ns, l.end_ns = e.end_ns;
      l.call_ns = e.call_ns;
      std::memcpy(l.grid, e.grid, sizeof l.grid);
      std::memcpy(l.block, e.block, sizeof l.block);
      l.device = e.device;
      r.launches.push_back(std::move(l));
    }
    each(r);
    return std::string();
  });
}

} // namespace gpubt::abi
