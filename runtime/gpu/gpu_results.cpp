// The agent's results files -> GpuOutcome (see gpu_inject.h): each CUDA context's device maps
// merged by runtime/device_maps, its printf records appended in context order.
#include <dirent.h>
#include <fstream>
#include <sstream>

#include "runtime/abi/agent_protocol.h"
#include "runtime/gpu/device_maps.h"
#include "runtime/gpu/gpu_inject.h"
#include "runtime/output/event_printer.h"

namespace gpubt::runtime {
namespace {

// Every RESULTS.PID the agent wrote (one per CUDA process), images and messages together.
Result<abi::AgentResults> read_all_results(const GpuRun &run) {
  std::string dir = run.results_path.substr(0, run.results_path.rfind('/'));
  std::string prefix = run.results_path.substr(dir.size() + 1) + ".";
  abi::AgentResults all;
  bool any = false;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string name = e->d_name;
      if (name.rfind(prefix, 0) != 0 || name.find(".tmp") != std::string::npos)
        continue;
      std::ifstream in(dir + "/" + name, std::ios::binary);
      std::stringstream bytes;
      bytes << in.rdbuf();
      auto one = abi::parse_agent_results(bytes.str());
      if (!one) {
        closedir(d);
        return make_error(one.error());
      }
      any = true;
      for (auto &img : one->images)
        all.images.push_back(std::move(img));
      for (auto &m : one->messages)
        all.messages.push_back(std::move(m));
      all.kernel_names.merge(one->kernel_names);
      all.untraced += one->untraced;
      all.kernels.merge(one->kernels);
    }
    closedir(d);
  }
  if (!any)
    return make_error("the GPU agent wrote no results (did the program create a CUDA context "
                      "and exit normally?)");
  return all;
}

} // namespace

Result<GpuOutcome> collect_gpu_results(const abi::ProgramSpec &spec, const GpuRun &run) {
  auto results = read_all_results(run);
  if (!results && !run.without_results.empty()) // some GPU API cannot have been traced
    return make_error(run.without_results);
  if (!results)
    return make_error(results.error());
  return gpu_outcome(spec, *results);
}

GpuOutcome gpu_outcome(const abi::ProgramSpec &spec, const abi::AgentResults &results) {
  const abi::AgentResults *all = &results;

  const auto &layouts = spec.device.maps;
  std::vector<DeviceMapSnapshot> merged(layouts.size());
  GpuOutcome out;
  out.maps.resize(spec.maps.size());
  out.kernel_names = all->kernel_names;
  out.untraced = all->untraced;
  out.kernels = all->kernels;
  // A from_host map's device table is the host's copy: the host map prints. A to_host map's is
  // read for its drops only: the agent copied it into the BPF map, which prints.
  auto valid = [&](size_t j) {
    return !layouts[j].from_host && layouts[j].map_index >= 0 &&
           size_t(layouts[j].map_index) < spec.maps.size();
  };
  for (const auto &img : all->images) {
    for (size_t j = 0; j < layouts.size() && j < img.maps.size(); ++j) {
      if (!valid(j) || img.maps[j].empty())
        continue;
      auto st = add_device_map_image(spec.maps[layouts[j].map_index], layouts[j],
                                     img.maps[j].data(), img.maps[j].size(), merged[j]);
      if (!st)
        out.warnings.push_back(st.error());
    }
    // Whole records only: the images of several processes follow each other, and a record
    // that is not one would take the next process's with it.
    size_t whole = whole_device_records(img.ring_records.data(), img.ring_records.size());
    if (whole < img.ring_records.size())
      out.warnings.push_back("a process's GPU results held " +
                             std::to_string(img.ring_records.size() - whole) +
                             " bytes that are not gpu probe records: left out");
    out.ring_records.insert(out.ring_records.end(), img.ring_records.begin(),
                            img.ring_records.begin() + ptrdiff_t(whole));
    out.ring_drops += img.ring_drops;
  }
  std::vector<uint64_t> launches(spec.device.probes.size());
  for (const auto &img : all->images)
    for (size_t i = 0; i < img.probe_launches.size() && i < launches.size(); ++i)
      launches[i] += img.probe_launches[i];
  for (size_t i = 0; i < launches.size(); ++i) {
    out.launches += launches[i];
    if (!launches[i])
      out.unmatched.push_back(i);
  }
  for (size_t j = 0; j < layouts.size(); ++j) {
    if (!valid(j))
      continue;
    int index = layouts[j].map_index;
    if (!layouts[j].to_host)
      out.maps[index] = std::move(merged[j].data);
    std::string warning = device_map_drops_message(spec.maps[index], layouts[j], merged[j].drops);
    if (!warning.empty())
      out.warnings.push_back(warning);
  }
  return out;
}

} // namespace gpubt::runtime
