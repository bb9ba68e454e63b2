// libFuzzer target: what an agent sends gpubt (printf, live map, running- and finished-launch
// records; agent
// results), from processes that may be other users', read by the parsers gpubt runs on it: they
// must take what parses and say an error for the rest, never crash, hang or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/abi/agent_protocol.h"
#include "runtime/abi/finished_launches.h"
#include "runtime/abi/live_maps.h"
#include "runtime/abi/running_launches.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace gpubt::abi;
  std::vector<uint8_t> records(data, data + size);
  LiveMaps live;
  (void)live.take_from(records);
  RunningTable running;
  (void)running.take_from(records);
  (void)take_finished_launches(records, [](const FinishedLaunches &) {});
  if (records.size() > size)
    abort(); // taking records never adds bytes
  (void)live.results();
  (void)parse_agent_results(std::string(reinterpret_cast<const char *>(data), size));
  return 0;
}
