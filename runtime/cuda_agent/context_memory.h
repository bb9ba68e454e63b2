// One CUDA context's probe state in device memory: the maps and printf ring every probe shares,
// and one gpubt_device_ctx per traced kernel (its name and probe mask), all from sanitizerAlloc.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <cuda.h>
#include <sanitizer.h>

#include "runtime/abi/agent_protocol.h"
#include "runtime/cuda_agent/gpu_clock.h"
#include "runtime/cuda_agent/stream_writes.h"

namespace gpubt::agent {

class ContextMemory {
public:
  // Allocates and zeroes the maps and the ring, writes their headers (callable in a launch
  // callback: host copies go through pinned memory). Error: a message.
  // CLOCK: the GPU clock's model (none yet: %globaltimer taken for CLOCK_REALTIME).
  static Result<ContextMemory> create(CUcontext ctx, const abi::AgentConfig &config,
                                      const std::optional<ClockModel> &clock);

  // The clock model kernel ctxs made from now on get; returns the device addresses of those
  // made already, whose clock fields the caller updates (write_clock).
  std::vector<uint64_t> set_clock(const ClockModel &clock);

  // The userdata for kernels with this name and probe mask, made on first use (mask 0: a ctx
  // that runs no probe, for the other kernels of a patched module). nullptr on failure.
  void *kernel_ctx(const std::string &kernel_name, uint64_t mask);

  // Writes VALUE to device memory at ADDRESS and waits for it (callable in a launch callback).
  bool store_u64(uint64_t address, uint64_t value);

  // What a traced launch about to be made on a stream needs written there first: KERNEL_CTX's
  // per-launch state reset (launch_start, launch_exited; null: none) and every host map
  // (config.host_maps: BPF maps host probes write) as it is now, so that kernel sees the host's
  // values of its own launch call. All go as stream memory operations on STREAM (none: in a
  // graph launch, where no driver call may be made) when every such map is small and while the
  // driver takes them; else as copies on HSTREAM from a pinned ring of kHostMapSlots images per
  // map: a slot is reused after that many traced launches, which must have started by then.
  Status before_launch(const abi::AgentConfig &config, void *kernel_ctx,
                       Sanitizer_StreamHandle hstream, std::optional<CUstream> stream);
  // Why stream memory operations are not used (empty while they are).
  const std::string &stream_writes_refused() const { return stream_writes_refused_; }
  static constexpr uint32_t kHostMapSlots = 64;

  // Writes the maps the GPU writes and host probes read (config.host_maps, to_host) into their
  // BPF maps: at a synchronization with the GPU (STREAM: the one synchronized, idle now; null:
  // the whole context) and at the end.
  Status write_back_host_maps(const abi::AgentConfig &config, Sanitizer_StreamHandle stream);

  // Appends the ring's committed records to OUT and frees their space on the device (waits for
  // the work on the NULL stream: call where a sync is acceptable). Returns false on failure.
  bool drain_ring(std::vector<uint8_t> &out);

  // Where each map is now (device address, bytes), for copies made elsewhere (live_copier.h).
  std::vector<std::pair<CUdeviceptr, uint64_t>> map_ranges() const;

  // Copies the maps and the ring's undrained records back (call before release()).
  abi::DeviceImage read_back(int device) const;
  // The kernels whose device name had to be shortened: that name -> the full one.
  const std::map<std::string, std::string> &shortened_names() const { return shortened_names_; }
  void release(); // frees everything (not in the destructor: contexts may be gone at exit)

private:
  bool copy_in(void *dev, const void *bytes, size_t size); // at most kStagingBytes / 2 - 8
  Status copy_before_launch(const abi::AgentConfig &config, void *kernel_ctx,
                            Sanitizer_StreamHandle hstream);
  // config.host_maps[I]'s BPF map as its device image, in host_map_image_; false for a map the
  // GPU writes (nothing read).
  Result<bool> snapshot_host_map(const abi::AgentConfig &config, size_t i);
  CUcontext ctx_ = nullptr;
  std::vector<void *> maps_;
  std::vector<uint64_t> map_sizes_;
  void *ring_ = nullptr;
  uint32_t ring_capacity_ = 0;
  void *ring_host_ = nullptr; // pinned mirror of the ring, for drains in launch callbacks
  void *staging_ = nullptr;   // pinned host memory: launch callbacks may copy only from/to it
  std::map<std::pair<std::string, uint64_t>, void *> kernel_ctxs_;
  uint32_t block_state_ = 0;        // abi::DeviceBlockState: each traced kernel gets block_slots
  std::vector<void *> block_slots_; // theirs
  uint32_t next_kernel_index_ = 0;
  std::map<std::string, std::string> shortened_names_;
  ClockModel clock_;
  void *host_map_staging_ = nullptr; // pinned: kHostMapSlots images of each host map
  void *launch_reset_ = nullptr;     // pinned: {UINT64_MAX, 0}, copied before each launch
  std::vector<uint64_t> host_map_offsets_; // per config.host_maps: its images' start
  uint64_t host_map_launches_ = 0;
  std::vector<uint8_t> host_map_image_;
  StreamWrites stream_writes_;
  std::string stream_writes_refused_;
};

} // namespace gpubt::agent
