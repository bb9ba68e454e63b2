// Fatbin layout (reverse-engineered, checked against nvcc 13 output):
//   container: u32 magic, u16 version (1), u16 header size (16), u64 bytes of entries after it
//   entry:     u16 kind, u16 ?, u32 header size, u64 padded payload size, u32 compressed size,
//              u32 ?, u16 minor, u16 major, u32 sm arch, u32 name offset, u32 name size,
//              u64 flags, u64 ?, u64 uncompressed size; then header-size-64 more bytes.
// The payload follows the header; the next entry follows the padded payload.
#include "runtime/ptx/fatbin.h"

#include <zstd.h>

#include <cstring>
#include <string>

namespace gpubt::runtime {

namespace {

constexpr size_t kContainerHeader = 16;
constexpr size_t kEntryHeaderMin = 64;
// No real entry comes near this; it stops a corrupt size from asking for a huge buffer.
constexpr uint64_t kMaxPayload = uint64_t(1) << 30;

template <class T> T load(std::span<const uint8_t> b, size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}

Error fail(size_t at, const std::string &what) {
  return make_error("fatbin: " + what + " at offset " + std::to_string(at));
}

// Entries of the container at [start, start + 16 + size), appended to OUT.
Status read_container(std::span<const uint8_t> bytes, size_t start, size_t end,
                      std::vector<FatbinEntry> &out) {
  size_t at = start + kContainerHeader;
  while (at < end) {
    if (end - at < kEntryHeaderMin)
      return fail(at, "truncated entry header");
    auto e = bytes.subspan(at);
    FatbinEntry entry;
    entry.kind = load<uint16_t>(e, 0);
    entry.header_size = load<uint32_t>(e, 4);
    uint64_t padded = load<uint64_t>(e, 8);
    uint32_t compressed_size = load<uint32_t>(e, 16);
    entry.sm_arch = load<uint32_t>(e, 28);
    entry.flags = load<uint64_t>(e, 40);
    uint64_t uncompressed = load<uint64_t>(e, 56);
    entry.header_offset = at;
    if (entry.header_size < kEntryHeaderMin || entry.header_size > end - at)
      return fail(at, "entry header size " + std::to_string(entry.header_size) + " out of range");
    size_t payload_at = at + entry.header_size;
    if (padded > end - payload_at)
      return fail(at, "entry payload of " + std::to_string(padded) + " bytes past the container");
    if ((entry.flags & kFatbinFlagLz4) && (entry.flags & kFatbinFlagZstd))
      return fail(at, "entry flags name two codecs");
    uint64_t stored = padded;
    if (entry.compressed()) {
      if (compressed_size > padded)
        return fail(at, "compressed size larger than the payload");
      if (uncompressed > kMaxPayload)
        return fail(at, "uncompressed size " + std::to_string(uncompressed) + " too large");
      stored = compressed_size;
      entry.uncompressed_size = uncompressed;
    } else {
      entry.uncompressed_size = padded;
    }
    entry.payload_offset = payload_at;
    entry.payload = bytes.subspan(payload_at, stored);
    out.push_back(entry);
    at = payload_at + padded;
  }
  return Ok{};
}

Result<std::vector<uint8_t>> zstd_decompress(std::span<const uint8_t> in, size_t out_size) {
  unsigned long long framed = ZSTD_getFrameContentSize(in.data(), in.size());
  if (framed == ZSTD_CONTENTSIZE_ERROR)
    return make_error("fatbin: payload is not a zstd frame");
  if (framed != ZSTD_CONTENTSIZE_UNKNOWN && framed != out_size)
    return make_error("fatbin: zstd frame size " + std::to_string(framed) + " differs from the " +
                      "entry's uncompressed size " + std::to_string(out_size));
  std::vector<uint8_t> out(out_size);
  size_t n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
  if (ZSTD_isError(n))
    return make_error(std::string("fatbin: bad zstd payload: ") + ZSTD_getErrorName(n));
  if (n != out_size)
    return make_error("fatbin: zstd payload expands to " + std::to_string(n) + " bytes, not " +
                      std::to_string(out_size));
  return out;
}

// LZ4 lengths: a 4-bit field of 15 continues with bytes added while they are 255.
bool read_length(std::span<const uint8_t> in, size_t &ip, size_t &len) {
  if (len != 15)
    return true;
  for (;;) {
    if (ip >= in.size())
      return false;
    uint8_t b = in[ip++];
    len += b;
    if (len > kMaxPayload)
      return false;
    if (b != 255)
      return true;
  }
}

} // namespace

Result<std::vector<uint8_t>> lz4_block_decompress(std::span<const uint8_t> in, size_t out_size) {
  if (out_size > kMaxPayload)
    return make_error("fatbin: lz4 output size too large");
  std::vector<uint8_t> out(out_size);
  size_t ip = 0, op = 0;
  auto bad = [](const char *why) {
    return make_error(std::string("fatbin: bad lz4 payload: ") + why);
  };
  while (ip < in.size()) {
    uint8_t token = in[ip++];
    size_t lit = token >> 4;
    if (!read_length(in, ip, lit))
      return bad("truncated literal length");
    if (lit > in.size() - ip)
      return bad("literals past the input");
    if (lit > out_size - op)
      return bad("literals past the output");
    std::memcpy(out.data() + op, in.data() + ip, lit);
    ip += lit;
    op += lit;
    if (ip == in.size())
      break; // the last sequence has literals only
    if (in.size() - ip < 2)
      return bad("truncated match offset");
    size_t offset = in[ip] | size_t(in[ip + 1]) << 8;
    ip += 2;
    size_t match = token & 15;
    if (!read_length(in, ip, match))
      return bad("truncated match length");
    match += 4;
    if (offset == 0 || offset > op)
      return bad("match offset before the start");
    if (match > out_size - op)
      return bad("match past the output");
    // Byte by byte: a match may overlap the bytes it produces (offset < length).
    for (size_t i = 0; i < match; ++i, ++op)
      out[op] = out[op - offset];
  }
  if (op != out_size)
    return bad("expands to fewer bytes than the entry says");
  return out;
}

Result<std::vector<FatbinEntry>> read_fatbin(std::span<const uint8_t> bytes) {
  std::vector<FatbinEntry> out;
  size_t at = 0;
  bool any = false;
  while (at < bytes.size()) {
    // Containers in a .nv_fatbin section are aligned; the gap between them is zeros.
    if (any && bytes[at] == 0) {
      ++at;
      continue;
    }
    if (bytes.size() - at < kContainerHeader)
      return fail(at, "truncated container header");
    if (load<uint32_t>(bytes, at) != kFatbinContainerMagic)
      return fail(at, "no container magic");
    uint16_t version = load<uint16_t>(bytes, at + 4);
    uint16_t header_size = load<uint16_t>(bytes, at + 6);
    uint64_t size = load<uint64_t>(bytes, at + 8);
    if (version != 1)
      return fail(at, "unknown container version " + std::to_string(version));
    if (header_size != kContainerHeader)
      return fail(at, "container header size " + std::to_string(header_size) + ", not 16");
    if (size > bytes.size() - at - kContainerHeader)
      return fail(at, "container of " + std::to_string(size) + " bytes past the end");
    size_t end = at + kContainerHeader + size;
    if (auto st = read_container(bytes, at, end, out); !st)
      return Error{st.error()};
    at = end;
    any = true;
  }
  if (!any)
    return make_error("fatbin: empty input");
  return out;
}

Result<std::vector<uint8_t>> entry_payload(const FatbinEntry &entry) {
  if (entry.flags & kFatbinFlagZstd)
    return zstd_decompress(entry.payload, entry.uncompressed_size);
  if (entry.flags & kFatbinFlagLz4)
    return lz4_block_decompress(entry.payload, entry.uncompressed_size);
  return std::vector<uint8_t>(entry.payload.begin(), entry.payload.end());
}

Result<std::span<const uint8_t>> fatbin_container_at(const void *image) {
  if (!image)
    return make_error("fatbin: null image");
  auto *p = static_cast<const uint8_t *>(image);
  uint32_t magic;
  std::memcpy(&magic, p, 4);
  if (magic == kFatbinWrapperMagic) {
    // __fatBinC_Wrapper_t: int magic, int version, const unsigned long long *data, void *filename
    const void *data;
    std::memcpy(&data, p + 8, sizeof(data));
    if (!data)
      return make_error("fatbin: wrapper with no container");
    p = static_cast<const uint8_t *>(data);
    std::memcpy(&magic, p, 4);
  }
  if (magic != kFatbinContainerMagic)
    return make_error("fatbin: image is neither a fatbin wrapper nor a container");
  uint64_t size;
  std::memcpy(&size, p + 8, 8);
  if (size > kMaxPayload * 16)
    return make_error("fatbin: container size " + std::to_string(size) + " too large");
  return std::span<const uint8_t>(p, kContainerHeader + size);
}

} // namespace gpubt::runtime
