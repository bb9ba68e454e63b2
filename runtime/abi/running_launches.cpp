#include "runtime/abi/running_launches.h"

#include <cstring>

#include "runtime/abi/agent_records.h"

namespace gpubt::abi {
namespace {

// Fixed-size part of an entry, then the kernel name's bytes.
struct Entry {
  uint64_t seq, stream, since_ns;
  uint32_t grid[3], block[3];
  uint32_t device, later, exact, graph_kernels, name_size, pad;
};
struct Head {
  uint64_t pid, sent_ns, count;
};

} // namespace

std::string running_launches_record(const RunningLaunches &r) {
  Head head{r.pid, r.sent_ns, r.launches.size()};
  std::string payload(reinterpret_cast<const char *>(&head), sizeof head);
  for (const auto &l : r.launches) {
    Entry e{l.seq, l.stream, l.since_ns, {}, {}, l.device, l.later, l.exact, l.graph_kernels,
            static_cast<uint32_t>(l.kernel.size()), 0};
    std::memcpy(e.grid, l.grid, sizeof e.grid);
    std::memcpy(e.block, l.block, sizeof e.block);
    payload.append(reinterpret_cast<const char *>(&e), sizeof e);
    payload += l.kernel;
  }
  return agent_record(EventKind::RunningLaunches, payload);
}

Status RunningTable::take_from(std::vector<uint8_t> &records,
                               const std::function<void(const RunningLaunches &)> &each) {
  return take_agent_records(records, EventKind::RunningLaunches, [&](const uint8_t *p, size_t size) {
    PayloadReader in(p, size);
    Head head;
    if (!in.read(head))
      return std::string("a running launches record shorter than its header");
    RunningLaunches r{static_cast<uint32_t>(head.pid), head.sent_ns, {}};
    for (uint64_t i = 0; i < head.count; ++i) {
      Entry e;
      RunningLaunch l;
      if (!in.read(e) || !in.read_string(l.kernel, e.name_size))
        return std::string("a running launches record shorter than it says");
      l.seq = e.seq, l.stream = e.stream, l.since_ns = e.since_ns;
      std::memcpy(l.grid, e.grid, sizeof l.grid);
      std::memcpy(l.block, e.block, sizeof l.block);
      l.device = e.device, l.later = e.later, l.exact = e.exact != 0;
      l.graph_kernels = e.graph_kernels;
      r.launches.push_back(std::move(l));
    }
    if (each)
      each(r);
    latest_[r.pid] = std::move(r);
    return std::string();
  });
}

} // namespace gpubt::abi
