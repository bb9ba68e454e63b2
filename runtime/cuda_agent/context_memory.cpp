// Device memory through the Sanitizer memory API (safe inside callbacks). Host->device copies
// go through a pinned staging buffer and are waited for with a small device->host copy on the
// same (NULL) stream, so a kernel never starts before its userdata is written.
#include "runtime/cuda_agent/context_memory.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>

#include <sanitizer.h>

#include "runtime/abi/device_map_table.h"
#include "runtime/abi/device_abi.h"
#include "runtime/abi/kernel_name.h"
#include "runtime/abi/ring_records.h"
#include "runtime/cuda_agent/host_map_snapshot.h"
#include "runtime/cuda_agent/host_map_writeback.h"

namespace gpubt::agent {
namespace {

constexpr size_t kStagingBytes = 4096;
static_assert(sizeof(gpubt_device_ctx) <= kStagingBytes / 2); // copy_in stages it there
// A traced launch's state starts over: launch_start = UINT64_MAX, launch_exited = 0.
constexpr uint64_t kLaunchReset[2] = {UINT64_MAX, 0};
constexpr size_t kLaunchStateOffset = offsetof(gpubt_device_ctx, launch_start);
static_assert(offsetof(gpubt_device_ctx, launch_exited) == kLaunchStateOffset + 8);
// Host maps up to this size go as stream writes (a scalar map is 48 bytes); bigger ones as copies.
constexpr uint64_t kStreamWriteMapBytes = 256;
constexpr uint64_t kMapFixedBytes = abi::kDeviceMapFixedBytes;

std::string why(const char *what, SanitizerResult r) {
  const char *s = nullptr;
  sanitizerGetResultString(r, &s);
  return std::string(what) + " failed: " + (s ? s : "error " + std::to_string(int(r)));
}

// Until the clock is measured: %globaltimer taken for CLOCK_REALTIME (true to a few ms).
int64_t realtime_offset_ns() {
  timespec mono, real;
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  return (int64_t(mono.tv_sec) - real.tv_sec) * 1000000000 + (mono.tv_nsec - real.tv_nsec);
}

// Every entry of a prefilled map READY (key and value zero), written from a pinned image.
SanitizerResult prefill(CUcontext ctx, void *map, const abi::DeviceMapSpec &spec) {
  void *image = nullptr;
  uint64_t size = spec.storage_size();
  SanitizerResult r = sanitizerAllocHost(ctx, &image, size);
  if (r != SANITIZER_SUCCESS)
    return r;
  auto *bytes = static_cast<uint8_t *>(image);
  std::memset(bytes, 0, size);
  abi::init_device_map_table(spec, bytes);
  r = sanitizerMemcpyHostToDeviceAsync(map, image, size, nullptr);
  if (r == SANITIZER_SUCCESS) // waits for the copy before the image goes
    r = sanitizerMemcpyDeviceToHost(bytes, map, 8, nullptr);
  sanitizerFreeHost(ctx, image);
  return r;
}

} // namespace

Result<ContextMemory> ContextMemory::create(CUcontext ctx, const abi::AgentConfig &config,
                                            const std::optional<ClockModel> &clock) {
  ContextMemory m;
  m.ctx_ = ctx;
  m.block_state_ = config.device.features & abi::DeviceBlockState;
  if (std::getenv("GPUBT_AGENT_COPY_ONLY")) // to compare, or should a driver mishandle them
    m.stream_writes_refused_ = "GPUBT_AGENT_COPY_ONLY is set";
  if (clock)
    m.clock_ = *clock;
  else
    m.clock_.offset_ns = realtime_offset_ns();
  auto fail = [&](const char *what, SanitizerResult r) {
    m.release();
    return make_error(why(what, r));
  };
  SanitizerResult r = sanitizerAllocHost(ctx, &m.staging_, kStagingBytes);
  if (r != SANITIZER_SUCCESS)
    return fail("sanitizerAllocHost", r);
  auto *stage = static_cast<uint8_t *>(m.staging_);
  // Headers are staged one after another; the staging buffer is written before any copy.
  size_t staged = 0;
  for (const auto &spec : config.device.maps) {
    void *p = nullptr;
    uint64_t size = spec.storage_size();
    if ((r = sanitizerAlloc(ctx, &p, size)) != SANITIZER_SUCCESS)
      return fail("sanitizerAlloc (device map)", r);
    m.maps_.push_back(p);
    m.map_sizes_.push_back(size);
    if ((r = sanitizerMemset(p, 0, size, nullptr)) != SANITIZER_SUCCESS)
      return fail("sanitizerMemset", r);
    if (spec.prefilled && (r = prefill(ctx, p, spec)) != SANITIZER_SUCCESS)
      return fail("marking a striped map's entries", r);
    if (staged + sizeof(gpubt_device_map_header) > kStagingBytes / 2)
      return fail("too many device maps", SANITIZER_ERROR_INVALID_PARAMETER);
    abi::DeviceMapSpec header_only = spec; // the entries are zero already, or prefilled above
    header_only.prefilled = false;
    abi::init_device_map_table(header_only, stage + staged);
    if ((r = sanitizerMemcpyHostToDeviceAsync(p, stage + staged, sizeof(gpubt_device_map_header),
                                              nullptr)) != SANITIZER_SUCCESS)
      return fail("sanitizerMemcpyHostToDeviceAsync", r);
    staged += sizeof(gpubt_device_map_header);
  }
  if (config.device.ring_capacity) {
    m.ring_capacity_ = config.device.ring_capacity;
    uint64_t size = sizeof(gpubt_device_ring) + config.device.ring_capacity;
    if ((r = sanitizerAlloc(ctx, &m.ring_, size)) != SANITIZER_SUCCESS)
      return fail("sanitizerAlloc (printf ring)", r);
    if ((r = sanitizerMemset(m.ring_, 0, size, nullptr)) != SANITIZER_SUCCESS)
      return fail("sanitizerMemset", r);
    if ((r = sanitizerAllocHost(ctx, &m.ring_host_, size)) != SANITIZER_SUCCESS)
      return fail("sanitizerAllocHost (printf ring)", r);
    gpubt_device_ring h{0, 0, 0, config.device.ring_capacity, 0};
    std::memcpy(stage + staged, &h, sizeof h);
    if ((r = sanitizerMemcpyHostToDeviceAsync(m.ring_, stage + staged, sizeof h, nullptr)) !=
        SANITIZER_SUCCESS)
      return fail("sanitizerMemcpyHostToDeviceAsync", r);
    staged += sizeof h;
  }
  uint64_t staging = 0;
  for (const auto &h : config.host_maps) { // a ring for the host's values, one for the GPU's
    uint64_t size = config.device.maps.at(h.device_map).storage_size();
    m.host_map_offsets_.push_back(staging);
    staging += uint64_t(h.to_host ? 1 : kHostMapSlots) * size;
    if (!h.to_host && size > kStreamWriteMapBytes && m.stream_writes_refused_.empty())
      m.stream_writes_refused_ = "a map host probes write is over " +
                                 std::to_string(kStreamWriteMapBytes) + " bytes on the GPU";
  }
  if (staging && (r = sanitizerAllocHost(ctx, &m.host_map_staging_, staging)) != SANITIZER_SUCCESS)
    return fail("sanitizerAllocHost (host maps)", r);
  if (config.device.launch_state) {
    if ((r = sanitizerAllocHost(ctx, &m.launch_reset_, 16)) != SANITIZER_SUCCESS)
      return fail("sanitizerAllocHost (launch state)", r);
    std::memcpy(m.launch_reset_, kLaunchReset, sizeof kLaunchReset);
  }
  if (!m.maps_.empty() || m.ring_) {
    void *any = m.ring_ ? m.ring_ : m.maps_[0];
    if ((r = sanitizerMemcpyDeviceToHost(stage + kStagingBytes - 8, any, 8, nullptr)) !=
        SANITIZER_SUCCESS)
      return fail("sanitizerMemcpyDeviceToHost", r);
  }
  return m;
}

void *ContextMemory::kernel_ctx(const std::string &kernel_name, uint64_t mask) {
  auto key = std::make_pair(mask ? kernel_name : std::string(), mask);
  if (auto it = kernel_ctxs_.find(key); it != kernel_ctxs_.end())
    return it->second;
  gpubt_device_ctx c;
  std::memset(&c, 0, sizeof c);
  c.abi_version = GPUBT_DEVICE_ABI_VERSION;
  c.pid = static_cast<uint32_t>(getpid());
  c.clock_offset_ns = clock_.offset_ns;
  c.clock_rate = clock_.rate_q32;
  c.clock_base = clock_.base;
  c.ring = reinterpret_cast<uint64_t>(ring_);
  c.kernel_index = next_kernel_index_++;
  c.num_maps = static_cast<uint32_t>(std::min<size_t>(maps_.size(), GPUBT_MAX_DEVICE_MAPS));
  std::string name = abi::device_kernel_name(key.first);
  if (name != key.first)
    shortened_names_[name] = key.first;
  std::strncpy(c.kernel_name, name.c_str(), GPUBT_KERNEL_NAME_SIZE - 1);
  for (uint32_t i = 0; i < c.num_maps; ++i)
    c.maps[i] = reinterpret_cast<uint64_t>(maps_[i]);
  c.probe_mask = mask;
  c.launch_start = kLaunchReset[0]; // as a launch's last thread leaves it for the next one
  c.launch_exited = kLaunchReset[1];

  // Block probes' words (device_abi.h block_slots): this kernel's own, as its launches on one
  // stream follow each other and other kernels may run beside them.
  if (mask && (block_state_ & abi::DeviceBlockState)) {
    void *slots = nullptr;
    size_t bytes = size_t(GPUBT_BLOCK_SLOTS) * 8;
    if (sanitizerAlloc(ctx_, &slots, bytes) != SANITIZER_SUCCESS)
      return nullptr;
    if (sanitizerMemset(slots, 0, bytes, nullptr) != SANITIZER_SUCCESS) {
      sanitizerFree(ctx_, slots);
      return nullptr;
    }
    block_slots_.push_back(slots);
    c.block_slots = reinterpret_cast<uint64_t>(slots);
  }
  void *dev = nullptr;
  if (sanitizerAlloc(ctx_, &dev, sizeof c) != SANITIZER_SUCCESS)
    return nullptr;
  if (!copy_in(dev, &c, sizeof c)) {
    sanitizerFree(ctx_, dev);
    return nullptr;
  }
  kernel_ctxs_[key] = dev;
  return dev;
}

std::vector<uint64_t> ContextMemory::set_clock(const ClockModel &clock) {
  clock_ = clock;
  std::vector<uint64_t> out;
  for (auto &[key, dev] : kernel_ctxs_)
    out.push_back(reinterpret_cast<uint64_t>(dev));
  return out;
}

Result<bool> ContextMemory::snapshot_host_map(const abi::AgentConfig &config, size_t i) {
  const auto &h = config.host_maps[i];
  if (h.to_host)
    return false;
  auto n = agent::snapshot_host_map(h.fd, {h.key_size, h.value_size, config.device.maps.at(h.device_map)},
                                    host_map_image_);
  if (!n)
    return Error{n.error()};
  return true;
}

Status ContextMemory::before_launch(const abi::AgentConfig &config, void *kernel_ctx,
                                    Sanitizer_StreamHandle hstream,
                                    std::optional<CUstream> stream) {
  if (!stream || !stream_writes_refused_.empty())
    return copy_before_launch(config, kernel_ctx, hstream);
  if (kernel_ctx)
    stream_writes_.add(reinterpret_cast<uint64_t>(kernel_ctx) + kLaunchStateOffset, kLaunchReset,
                       sizeof kLaunchReset);
  for (size_t i = 0; i < config.host_maps.size(); ++i) {
    auto read = snapshot_host_map(config, i);
    if (!read) {
      stream_writes_.clear();
      return Error{read.error()};
    }
    if (!*read)
      continue;
    // The first words (capacity and sizes) never change.
    const auto &h = config.host_maps[i];
    stream_writes_.add(reinterpret_cast<uint64_t>(maps_.at(h.device_map)) + kMapFixedBytes,
                       host_map_image_.data() + kMapFixedBytes,
                       host_map_image_.size() - kMapFixedBytes);
  }
  if (!stream_writes_.words())
    return Ok{};
  if (auto st = stream_writes_.issue(*stream); !st) {
    stream_writes_refused_ = st.error();
    return copy_before_launch(config, kernel_ctx, hstream);
  }
  return Ok{};
}

Status ContextMemory::copy_before_launch(const abi::AgentConfig &config, void *kernel_ctx,
                                         Sanitizer_StreamHandle hstream) {
  if (kernel_ctx &&
      (!launch_reset_ ||
       sanitizerMemcpyHostToDeviceAsync(static_cast<uint8_t *>(kernel_ctx) + kLaunchStateOffset,
                                        launch_reset_, sizeof kLaunchReset,
                                        hstream) != SANITIZER_SUCCESS))
    return make_error("resetting a kernel's launch state failed");
  uint64_t slot = host_map_launches_++ % kHostMapSlots;
  for (size_t i = 0; i < config.host_maps.size(); ++i) {
    auto read = snapshot_host_map(config, i);
    if (!read)
      return Error{read.error()};
    if (!*read)
      continue;
    const auto &h = config.host_maps[i];
    const abi::DeviceMapSpec &spec = config.device.maps.at(h.device_map);
    auto *image = static_cast<uint8_t *>(host_map_staging_) + host_map_offsets_[i] +
                  slot * spec.storage_size();
    std::memcpy(image, host_map_image_.data(), spec.storage_size());
    if (sanitizerMemcpyHostToDeviceAsync(maps_.at(h.device_map), image, spec.storage_size(),
                                         hstream) != SANITIZER_SUCCESS)
      return make_error("copying a host map to the GPU failed");
  }
  return Ok{};
}

Status ContextMemory::write_back_host_maps(const abi::AgentConfig &config,
                                           Sanitizer_StreamHandle stream) {
  for (size_t i = 0; i < config.host_maps.size(); ++i) {
    const auto &h = config.host_maps[i];
    if (!h.to_host)
      continue;
    const abi::DeviceMapSpec &spec = config.device.maps.at(h.device_map);
    auto *image = static_cast<uint8_t *>(host_map_staging_) + host_map_offsets_[i];
    if (sanitizerMemcpyDeviceToHost(image, maps_.at(h.device_map), spec.storage_size(), stream) !=
        SANITIZER_SUCCESS)
      return make_error("copying a map the GPU writes back failed");
    auto n = write_back_device_map(h.fd, {h.key_size, h.value_size, spec}, image,
                                   spec.storage_size());
    if (!n)
      return Error{n.error()};
  }
  return Ok{};
}

bool ContextMemory::copy_in(void *dev, const void *bytes, size_t size) {
  // Through the second half of the pinned staging buffer; the read back waits for the copy.
  auto *stage = static_cast<uint8_t *>(staging_) + kStagingBytes / 2;
  std::memcpy(stage, bytes, size);
  return sanitizerMemcpyHostToDeviceAsync(dev, stage, size, nullptr) == SANITIZER_SUCCESS &&
         sanitizerMemcpyDeviceToHost(static_cast<uint8_t *>(staging_) + kStagingBytes - 8, dev, 8,
                                     nullptr) == SANITIZER_SUCCESS;
}

bool ContextMemory::store_u64(uint64_t address, uint64_t value) {
  return copy_in(reinterpret_cast<void *>(address), &value, sizeof value);
}

std::vector<std::pair<CUdeviceptr, uint64_t>> ContextMemory::map_ranges() const {
  std::vector<std::pair<CUdeviceptr, uint64_t>> ranges;
  for (size_t i = 0; i < maps_.size(); ++i)
    ranges.emplace_back(reinterpret_cast<CUdeviceptr>(maps_[i]), map_sizes_[i]);
  return ranges;
}

abi::DeviceImage ContextMemory::read_back(int device) const {
  abi::DeviceImage img;
  img.device = device;
  for (size_t i = 0; i < maps_.size(); ++i) {
    std::vector<uint8_t> bytes(map_sizes_[i]);
    if (sanitizerMemcpyDeviceToHost(bytes.data(), maps_[i], bytes.size(), nullptr) !=
        SANITIZER_SUCCESS)
      bytes.clear();
    img.maps.push_back(std::move(bytes));
  }
  if (!ring_)
    return img;
  std::vector<uint8_t> raw(sizeof(gpubt_device_ring) + ring_capacity_);
  if (sanitizerMemcpyDeviceToHost(raw.data(), ring_, raw.size(), nullptr) != SANITIZER_SUCCESS)
    return img;
  gpubt_device_ring h;
  std::memcpy(&h, raw.data(), sizeof h);
  img.ring_drops = h.drops;
  abi::take_records(raw.data(), ring_capacity_, img.ring_records);
  return img;
}

bool ContextMemory::drain_ring(std::vector<uint8_t> &out) {
  if (!ring_)
    return true;
  auto *raw = static_cast<uint8_t *>(ring_host_);
  uint64_t size = sizeof(gpubt_device_ring) + ring_capacity_;
  if (sanitizerMemcpyDeviceToHost(raw, ring_, sizeof(gpubt_device_ring), nullptr) !=
      SANITIZER_SUCCESS)
    return false;
  gpubt_device_ring h;
  std::memcpy(&h, raw, sizeof h);
  if (h.head == h.tail)
    return true;
  if (sanitizerMemcpyDeviceToHost(raw + sizeof h, static_cast<uint8_t *>(ring_) + sizeof h,
                                  size - sizeof h, nullptr) != SANITIZER_SUCCESS)
    return false;
  uint64_t tail = abi::take_records(raw, ring_capacity_, out);
  if (tail == h.tail)
    return true;
  // The new tail goes through the pinned mirror's own tail word, then a read waits for it.
  std::memcpy(raw + offsetof(gpubt_device_ring, tail), &tail, 8);
  auto *dev_tail = static_cast<uint8_t *>(ring_) + offsetof(gpubt_device_ring, tail);
  return sanitizerMemcpyHostToDeviceAsync(dev_tail, raw + offsetof(gpubt_device_ring, tail), 8,
                                          nullptr) == SANITIZER_SUCCESS &&
         sanitizerMemcpyDeviceToHost(raw, dev_tail, 8, nullptr) == SANITIZER_SUCCESS;
}

void ContextMemory::release() {
  auto free_device = [&](void *&p) {
    if (p)
      sanitizerFree(ctx_, p);
    p = nullptr;
  };
  auto free_host = [&](void *&p) {
    if (p)
      sanitizerFreeHost(ctx_, p);
    p = nullptr;
  };
  for (void *&p : maps_)
    free_device(p);
  maps_.clear();
  free_device(ring_);
  for (auto &[key, p] : kernel_ctxs_)
    free_device(p);
  kernel_ctxs_.clear();
  for (void *&p : block_slots_)
    free_device(p);
  block_slots_.clear();
  for (void **p : {&ring_host_, &staging_, &host_map_staging_, &launch_reset_})
    free_host(*p);
}

} // namespace gpubt::agent
