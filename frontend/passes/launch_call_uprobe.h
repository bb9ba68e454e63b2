// launch_call in a gpu probe that stays on the GPU (issue 25). A launch-level probe reads it
// from the launch's record (place_launch_probes.h); on the GPU it is the host map the CUDA agent
// copies into each launch's stream just before the launch (map_sharing.h, FromHost), written by
// a hidden `uprobe:cuda:cuLaunchKernel* { @.launch_call = nsecs; }`: libcuda's launch entry,
// CLOCK_MONOTONIC, as the device's nsecs. A launch that does not enter cuLaunchKernel* (a CUDA
// graph's kernel nodes, a Vulkan dispatch) sees the last call's time, or 0 before any call.
#pragma once
#include <string>

#include "frontend/ast.h"
#include "frontend/passes/semantic_info.h"

namespace gpubt::frontend {

// The synthesized map, a name no script can write (internal: never printed), and its probe.
inline constexpr const char *kLaunchCallMap = "@.launch_call";
inline constexpr const char *kLaunchCallProbe = "uprobe:cuda:cuLaunchKernel*";

// Rewrites each launch_call of a gpu probe (is_gpu: not one place_launch_probes moved to the
// host) into a read of kLaunchCallMap, typed as the builtin was, and appends the hidden probe
// that writes it, with the map's entry in SEMA. Runs after place_launch_probes; returns whether
// it added the probe.
bool lower_launch_call_on_device(Program &program, SemanticInfo &sema);

} // namespace gpubt::frontend
