// The Vulkan injector: the layer (runtime/vulkan) enabled with VK_ADD_LAYER_PATH and
// VK_INSTANCE_LAYERS links the probes' SPIR-V into compute shaders as their pipelines are made.
// It is loaded as a program starts, so it cannot attach.
#include <cstdlib>
#include <fstream>

#include "runtime/gpu/injector.h"
#include "runtime/vulkan/layer_names.h"

namespace gpubt::runtime {
namespace {

const abi::DeviceCode *vulkan_image(const abi::ProgramSpec &spec) {
  for (const auto &image : spec.device.images)
    if (image.format == abi::DeviceFormat::SpirvVulkan)
      return &image;
  return nullptr;
}

class VulkanInjector : public Injector {
public:
  const char *name() const override { return "Vulkan"; }
  const char *traces() const override { return "Vulkan compute shaders"; }
  bool has_code(const abi::ProgramSpec &spec) const override { return vulkan_image(spec); }
  bool can_attach() const override { return false; }
  bool watches_launches() const override { return false; } // no queue submission is watched
  // A call at the shader's entry, or before its returns (runtime/vulkan/link_probes.cpp); no
  // memory-access or barrier point (docs/gpu-probes.md says what the layer could do).
  bool supports(const abi::ProbePoint &p) const override {
    return p.kind == abi::ProbePointKind::Entry || p.kind == abi::ProbePointKind::Exit;
  }
  const char *no_results() const override { return "no Vulkan program used gpubt's layer"; }

  // The layer instruments shaders by linking SPIR-V: --gpu-backend (CUDA's ptx or sass) does
  // not apply to it.
  Status apply_settings(const InjectorSettings &s, abi::AgentConfig &,
                        std::vector<std::string> &warnings) const override {
    if (s.backend != abi::GpuBackend::Auto)
      warnings.push_back(std::string("--gpu-backend=") + abi::backend_name(s.backend) +
                         " is for CUDA kernels: Vulkan compute shaders are instrumented by "
                         "linking the probes' SPIR-V into them whatever it says");
    return Ok{};
  }

  // The folder of the layer's manifest (GPUBT_VULKAN_LAYER_DIR, else next to gpubt).
  Result<std::string> find() const override {
    if (const char *p = std::getenv("GPUBT_VULKAN_LAYER_DIR")) {
      if (is_file(std::string(p) + "/" + kVulkanLayerManifest))
        return std::string(p);
      return make_error(std::string("the Vulkan layer is missing: no ") + kVulkanLayerManifest +
                        " in " + p + " (GPUBT_VULKAN_LAYER_DIR)");
    }
    std::string dir = self_dir();
    for (const char *rel : {"", "/runtime/vulkan", "/../lib/gpubt"})
      if (is_file(dir + rel + "/" + kVulkanLayerManifest))
        return dir + rel;
    return make_error(std::string("the Vulkan layer is missing: no ") + kVulkanLayerManifest +
                      " (with libgpubt_vulkan_layer.so) next to gpubt, in runtime/vulkan or in "
                      "../lib/gpubt (install it with gpubt, or set GPUBT_VULKAN_LAYER_DIR)");
  }

  Status prepare(const abi::ProgramSpec &spec, const std::string &dir, const std::string &,
                 abi::AgentConfig &config) const override {
    config.spirv_path = dir + "/probes.spv";
    std::ofstream(config.spirv_path, std::ios::binary) << vulkan_image(spec)->bytes;
    return Ok{};
  }

  void add_environment(const std::string &installed, Environment &env) const override {
    auto with = [](const char *var, const std::string &v) {
      const char *old = std::getenv(var);
      return old && *old ? v + ":" + old : v;
    };
    env.push_back({"VK_ADD_LAYER_PATH", with("VK_ADD_LAYER_PATH", installed)});
    env.push_back({"VK_INSTANCE_LAYERS", with("VK_INSTANCE_LAYERS", kVulkanLayerName)});
  }
};

} // namespace

std::unique_ptr<Injector> make_vulkan_injector() { return std::make_unique<VulkanInjector>(); }

} // namespace gpubt::runtime
