// The agent's results file -> GpuOutcome (see gpu_inject.h): each CUDA context's device maps
// merged by runtime/device_maps, its printf records appended in context order.
#include <fstream>
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
  std::vector<DeviceMapSnapshot> merged(layouts.size());
  GpuOutcome out;
  out.maps.resize(spec.maps.size());
  auto valid = [&](size_t j) {
    return layouts[j].map_index >= 0 && size_t(layouts[j].map_index) < spec.maps.size();
  };
  for (const auto &img : results->images) {
    for (size_t j = 0; j < layouts.size() && j < img.maps.size(); ++j) {
      if (!valid(j) || img.maps[j].empty())
        continue;
      auto st = add_device_map_image(spec.maps[layouts[j].map_index], layouts[j],
                                     img.maps[j].data(), img.maps[j].size(), merged[j]);
      if (!st)
        out.warnings.push_back(st.error());
    }
    out.ring_records.insert(out.ring_records.end(), img.ring_records.begin(),
                            img.ring_records.end());
    out.ring_drops += img.ring_drops;
  }
  for (size_t j = 0; j < layouts.size(); ++j) {
    if (!valid(j))
      continue;
    int index = layouts[j].map_index;
    out.maps[index] = std::move(merged[j].data);
    std::string warning = device_map_drops_message(spec.maps[index], layouts[j], merged[j].drops);
    if (!warning.empty())
      out.warnings.push_back(warning);
  }
  return out;
}

} // namespace gpubt::runtime
