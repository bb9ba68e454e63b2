// The Vulkan layer's state (layer_state.h).
#include "runtime/vulkan/layer_state.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gpubt::runtime::vulkan {

std::mutex g_mu;
std::map<void *, Instance> g_instances;
std::map<void *, Device> g_devices;
uint32_t g_untraced = 0;
std::set<std::string> g_kernels;

void say(const std::string &msg) { std::fprintf(stderr, "gpubt: vulkan: %s\n", msg.c_str()); }

const Config &config() {
  static Config c = [] {
    Config c;
    const char *path = std::getenv("GPUBT_AGENT_CONFIG");
    if (!path)
      return c;
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = abi::parse_agent_config(text.str());
    if (parsed && parsed->list_kernels) {
      c.agent = std::move(*parsed);
      c.listing = true;
      return c;
    }
    if (!parsed || parsed->spirv_path.empty()) {
      if (!parsed)
        say("bad config: " + parsed.error());
      return c;
    }
    c.agent = std::move(*parsed);
    std::ifstream spv(c.agent.spirv_path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(spv)), std::istreambuf_iterator<char>());
    c.probes.resize(bytes.size() / 4);
    std::memcpy(c.probes.data(), bytes.data(), c.probes.size() * 4);
    c.needs = ProbeNeeds::of(c.probes, c.agent.device.features);
    c.active = !c.probes.empty();
    return c;
  }();
  return c;
}

} // namespace gpubt::runtime::vulkan
