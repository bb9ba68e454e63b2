// The agent's results file -> GpuOutcome (see gpu_inject.h). Each CUDA context kept its own
// device maps; a key seen in several becomes one entry with one value per context, which the
// printers merge like per-CPU values.
#include <fstream>
#include <map>
#include <sstream>

#include "runtime/abi/agent_protocol.h"
#include "runtime/device_maps.h"
#include "runtime/gpu_inject.h"

namespace gpubt::runtime {

Result<GpuOutcome> collect_gpu_results(const abi::ProgramSpec &spec, const GpuRun &run) {
  std::ifstream in(run.results_path, std::ios::binary);
  if (!in)
    return make_error("the GPU agent wrote no results (did the program create a CUDA context "
                      "and exit normally?)");
  std::stringstream bytes;
  bytes << in.rdbuf();
  auto results = abi::parse_agent_results(bytes.str());
  if (!results)
    return make_error(results.error());

  const auto &layouts = spec.device.maps;
  std::vector<std::map<std::vector<uint8_t>, MapEntry>> merged(layouts.size());
  std::vector<uint64_t> drops(layouts.size());
  GpuOutcome out;
  out.maps.resize(spec.maps.size());
  for (const auto &img : results->images) {
    for (size_t j = 0; j < layouts.size() && j < img.maps.size(); ++j) {
      int index = layouts[j].map_index;
      if (index < 0 || size_t(index) >= spec.maps.size() || img.maps[j].empty())
        continue;
      auto snap = read_device_map(spec.maps[index], layouts[j], img.maps[j].data(),
                                  img.maps[j].size());
      if (!snap) {
        out.warnings.push_back(snap.error());
        continue;
      }
      drops[j] += snap->drops;
      for (auto &e : snap->data) {
        MapEntry &m = merged[j][e.key];
        m.key = e.key;
        for (auto &v : e.values)
          m.values.push_back(std::move(v));
      }
    }
    out.ring_records.insert(out.ring_records.end(), img.ring_records.begin(),
                            img.ring_records.end());
    out.ring_drops += img.ring_drops;
  }
  for (size_t j = 0; j < layouts.size(); ++j) {
    int index = layouts[j].map_index;
    if (index < 0 || size_t(index) >= spec.maps.size())
      continue;
    for (auto &[key, entry] : merged[j])
      out.maps[index].push_back(std::move(entry));
    std::string warning = device_map_drops_message(spec.maps[index], layouts[j], drops[j]);
    if (!warning.empty())
      out.warnings.push_back(warning);
  }
  return out;
}

} // namespace gpubt::runtime
