// The PTX backend's images: a module image the driver is about to load (fatbin, PTX text or
// cubin) turned into its PTX with the probes compiled in, for the kernels that match a probe.
// Each instrumented image names its userdata array after its own hash, so a loaded module
// (whose cubin the agent sees) tells which image, and so which kernel slots, it came from.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/abi/agent_protocol.h"

namespace gpubt::agent {

constexpr const char *kUserdataPrefix = "gpubt_userdata_";

struct PtxImage {
  std::string symbol;               // the userdata array: kUserdataPrefix + hash
  std::vector<std::string> kernels; // mangled names; kernel i reads symbol[i]
  std::string ptx;                  // the instrumented text handed to the driver
};

struct Substitution {
  const PtxImage *image = nullptr; // null: load the original image
  std::string why;                 // when null: why not (empty: no kernel matched)
};

class PtxImages {
public:
  explicit PtxImages(const abi::AgentConfig &config) : config_(config) {}

  // What to load in place of IMAGE on a GPU of compute capability SM (90) whose driver takes
  // PTX ISA up to MAX_ISA (90). Instrumented texts are cached by the source PTX's hash.
  Substitution substitute(const void *image, int sm, int max_isa);

  // The image whose userdata array is SYMBOL, or null.
  const PtxImage *by_symbol(const std::string &symbol) const;

private:
  const std::string *probe_ptx(int sm);
  const abi::AgentConfig &config_;
  std::map<std::string, std::unique_ptr<PtxImage>> images_; // by symbol
  std::map<int, std::string> probe_ptx_;                     // by SM, read once
};

} // namespace gpubt::agent
