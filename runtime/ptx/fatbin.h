// CUDA fatbin reader: the __nv_fatbin wrapper, containers (0xBA55ED50) and their PTX / cubin
// entries, with both payload codecs (zstd and the LZ4 block codec). Plain C++ for the GPU agent.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/abi/result.h"

namespace gpubt::runtime {

constexpr uint32_t kFatbinWrapperMagic = 0x466243b1;   // __fatBinC_Wrapper_t, .nvFatBinSegment
constexpr uint32_t kFatbinContainerMagic = 0xBA55ED50; // container, .nv_fatbin
constexpr uint64_t kFatbinFlagLz4 = 0x2000;            // payload is one LZ4 block
constexpr uint64_t kFatbinFlagZstd = 0x8000;           // payload is a zstd frame

enum class FatbinKind : uint16_t { Ptx = 1, Elf = 2 }; // others are kept as their raw value

struct FatbinEntry {
  uint16_t kind = 0;                // FatbinKind or an unknown raw value
  uint32_t sm_arch = 0;             // 75, 90, ...
  uint64_t flags = 0;               // kFatbinFlag*, 0x1 64-bit, 0x10 linux
  uint32_t header_size = 0;         // 64, 80 or 112: the entry header's own size field
  size_t header_offset = 0;         // of the entry header in the bytes given to read_fatbin
  size_t payload_offset = 0;        // of the stored payload in those bytes
  uint64_t uncompressed_size = 0;   // payload size once decompressed (= payload.size() if stored)
  std::span<const uint8_t> payload; // the stored (maybe compressed) bytes, into the input
  bool is_ptx() const { return kind == uint16_t(FatbinKind::Ptx); }
  bool is_elf() const { return kind == uint16_t(FatbinKind::Elf); }
  bool compressed() const { return flags & (kFatbinFlagLz4 | kFatbinFlagZstd); }
};

// Every entry of the container(s) in BYTES: one container, or a `.nv_fatbin` section of several
// (zero padding between them allowed). Entries point into BYTES, which must outlive them.
// Errors: wrong magic or version, truncated headers or payloads, sizes that overflow.
Result<std::vector<FatbinEntry>> read_fatbin(std::span<const uint8_t> bytes);

// The entry's payload, decompressed. PTX text keeps its trailing NUL padding.
Result<std::vector<uint8_t>> entry_payload(const FatbinEntry &entry);

// The container an in-memory image starts with, as the driver gets it (cuModuleLoadFatBinary,
// cuLibraryLoadData, __cudaRegisterFatBinary): a wrapper pointing at a container, or a
// container. Its size comes from the header, so IMAGE must be a real image in memory.
// Errors: neither magic.
Result<std::span<const uint8_t>> fatbin_container_at(const void *image);

// Decompresses one raw LZ4 block (no frame) that must expand to exactly OUT_SIZE bytes.
Result<std::vector<uint8_t>> lz4_block_decompress(std::span<const uint8_t> in, size_t out_size);

} // namespace gpubt::runtime
