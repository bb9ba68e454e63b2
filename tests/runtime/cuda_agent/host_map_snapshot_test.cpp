// Real BPF maps copied into device map images: every key is found again by a search written
// here from device_abi.h's description (gpubt_key_hash, linear probing), with its value.
#include <fcntl.h>
#include <net/if.h>

#include <chrono>
#include <cstring>
#include <map>
#include <string>

#include "runtime/abi/device_abi.h"
#include "runtime/cuda_agent/host_map_snapshot.h"
#include "tests/runtime/cuda_agent/bpf_test_map.h"

using gpubt::agent::HostMapLayout;
using gpubt::agent::snapshot_host_map;
using namespace gpubt::agent::test;

namespace {

gpubt_device_map_header header_of(const Bytes &image) {
  gpubt_device_map_header h;
  std::memcpy(&h, image.data(), sizeof(h));
  return h;
}

uint64_t word_at(const uint8_t *p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

struct Found {
  const uint8_t *entry = nullptr; // null: not found
  uint32_t index = 0, start = 0;
};

// The probes' search, from device_abi.h: the key's words, zero-padded, hashed; linear probing.
Found device_find(const Bytes &image, const Bytes &key) {
  auto h = header_of(image);
  std::vector<uint64_t> words(h.key_size / 8, 0);
  std::memcpy(words.data(), key.data(), std::min<size_t>(key.size(), h.key_size));
  uint64_t start = words.empty() ? 0 : gpubt_key_hash(words.data(), uint32_t(words.size()));
  start &= h.capacity - 1;
  for (uint32_t i = 0; i < h.capacity; ++i) {
    uint32_t idx = uint32_t((start + i) & (h.capacity - 1));
    const uint8_t *e = image.data() + sizeof(h) + uint64_t(idx) * h.entry_size;
    uint64_t state = word_at(e);
    if (state == GPUBT_SLOT_EMPTY)
      return {};
    EXPECT_EQ(state, GPUBT_SLOT_READY);
    if (std::memcmp(e + 8, words.data(), h.key_size) == 0)
      return {e, idx, uint32_t(start)};
  }
  return {};
}

// Every entry of EXPECTED is where the probes look for it, value zero-padded; nothing else is.
void expect_image(const Bytes &image, const HostMapLayout &l, const std::map<Bytes, Bytes> &expected,
                  uint64_t drops = 0) {
  auto h = header_of(image);
  ASSERT_EQ(image.size(), l.device.storage_size());
  EXPECT_EQ(h.capacity, l.device.capacity);
  EXPECT_EQ(h.key_size, l.device.key_size);
  EXPECT_EQ(h.value_size, l.device.value_size);
  EXPECT_EQ(h.entry_size, l.device.entry_size);
  EXPECT_EQ(h.drops, drops);
  EXPECT_EQ(h.reserved, 0u);
  uint64_t ready = 0;
  for (uint32_t i = 0; i < h.capacity; ++i)
    ready += word_at(image.data() + sizeof(h) + uint64_t(i) * h.entry_size) == GPUBT_SLOT_READY;
  EXPECT_EQ(ready, expected.size() - drops);
  uint64_t found = 0;
  for (const auto &[key, value] : expected) {
    Found f = device_find(image, key);
    if (!f.entry)
      continue;
    ++found;
    Bytes padded = value;
    padded.resize(h.value_size, 0);
    const uint8_t *v = f.entry + 8 + h.key_size;
    EXPECT_EQ(Bytes(v, v + h.value_size), padded);
  }
  EXPECT_EQ(found, expected.size() - drops);
}

// Puts ENTRIES into M, snapshots it with L into IMAGE and checks every entry is found.
void check_snapshot(const MapFd &m, const HostMapLayout &l, const Entries &entries, Bytes &image,
                    uint64_t drops = 0) {
  ASSERT_GE(m.fd(), 0) << strerror(errno);
  for (const auto &[key, value] : entries)
    m.put(key, value);
  auto n = snapshot_host_map(m.fd(), l, image);
  ASSERT_TRUE(n) << n.error();
  EXPECT_EQ(*n, entries.size());
  expect_image(image, l, entries, drops);
}

TEST(KeyHash, KnownVectors) {
  // fmix64 by hand: the constants of MurmurHash3's finalizer.
  EXPECT_EQ(gpubt_fmix64(0), 0u);
  uint64_t h = 0x9e3779b97f4a7c15ull * 31u + 42;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  uint64_t w = 42;
  EXPECT_EQ(gpubt_key_hash(&w, 1), h);
  EXPECT_EQ(gpubt_key_hash(nullptr, 0), 0x9e3779b97f4a7c15ull);
  // Fixed values: a change here changes where every probe looks (the device ABI).
  uint64_t words[2] = {1, 2};
  EXPECT_EQ(gpubt_key_hash(&w, 1), 0xb47f5be74b103286ull);
  EXPECT_EQ(gpubt_key_hash(words, 2), 0x94981a9e3ebffd23ull);
}

TEST(HostMapSnapshot, IntegerKeysCollideAndWrap) {
  Entries entries;
  for (uint64_t k = 0; k < 1000; ++k)
    entries[bytes_of(k * 4096)] = bytes_of(k * 7 + 1);
  Bytes image;
  check_snapshot(MapFd(BPF_MAP_TYPE_HASH, 8, 8, 4096), layout(8, 8, 1024), entries, image);
  uint32_t moved = 0, wrapped = 0;
  for (const auto &kv : entries) {
    Found f = device_find(image, kv.first);
    moved += f.index != f.start;
    wrapped += f.index < f.start;
  }
  EXPECT_GT(moved, 100u) << "collisions";
  EXPECT_GT(wrapped, 0u) << "runs past the table's end";
}

TEST(HostMapSnapshot, NarrowKeysAndValuesArePadded) {
  Entries entries;
  for (uint32_t k = 1; k <= 40; ++k)
    entries[bytes_of(k)] = Bytes(12, uint8_t(k));
  auto l = layout(4, 12, 64);
  Bytes image(l.device.storage_size() * 2, 0xff); // stale bytes from a bigger map are cleared
  check_snapshot(MapFd(BPF_MAP_TYPE_HASH, 4, 12, 64), l, entries, image);
  for (uint32_t i = 0; i < 64; ++i) // key padding is zero
    EXPECT_EQ(word_at(image.data() + 32 + i * l.device.entry_size + 8) >> 32, 0u);
}

TEST(HostMapSnapshot, StringKeys) {
  Entries entries;
  for (int i = 0; i < 300; ++i) {
    Bytes key(64, 0);
    std::string s = "kernel_" + std::to_string(i * 31) + (i % 3 ? "_void" : "");
    std::memcpy(key.data(), s.data(), s.size());
    entries[key] = bytes_of(uint64_t(i));
  }
  Bytes image;
  check_snapshot(MapFd(BPF_MAP_TYPE_HASH, 64, 8, 512), layout(64, 8, 512), entries, image);
}

TEST(HostMapSnapshot, TupleKeys) {
  Entries entries;
  for (int i = 0; i < 200; ++i)
    entries[bytes_of(TupleKey{uint64_t(1000 + i / 8), i % 8 - 2, 0})] =
        bytes_of(PairValue{-i, i * 1000});
  Bytes image;
  check_snapshot(MapFd(BPF_MAP_TYPE_HASH, 16, 16, 256), layout(16, 16, 256), entries, image);
}

TEST(HostMapSnapshot, ScalarGoesToSlotZero) {
  Bytes image;
  MapFd m(BPF_MAP_TYPE_HASH, 8, 8, 1);
  ASSERT_GE(m.fd(), 0) << strerror(errno);
  m.put(bytes_of(uint64_t(0)), bytes_of(int64_t(-5)));
  auto l = layout(8, 8, 1, true);
  auto n = snapshot_host_map(m.fd(), l, image);
  ASSERT_TRUE(n) << n.error();
  EXPECT_EQ(*n, 1u);
  ASSERT_EQ(image.size(), 32u + 16u);
  EXPECT_EQ(word_at(image.data() + 32), GPUBT_SLOT_READY);
  EXPECT_EQ(int64_t(word_at(image.data() + 40)), -5);
  expect_image(image, l, {{Bytes{}, bytes_of(int64_t(-5))}});
}

TEST(HostMapSnapshot, MoreEntriesThanSlotsAreDropped) {
  Entries entries;
  for (uint64_t k = 0; k < 100; ++k)
    entries[bytes_of(k)] = bytes_of(k);
  Bytes image;
  check_snapshot(MapFd(BPF_MAP_TYPE_HASH, 8, 8, 128), layout(8, 8, 64), entries, image, 36);
}

TEST(HostMapSnapshot, EmptyMap) {
  Bytes image(5, 0xff);
  check_snapshot(MapFd(BPF_MAP_TYPE_HASH, 8, 8, 16), layout(8, 8, 16), {}, image);
}

TEST(HostMapSnapshot, MapTypesWithoutBatchLookup) {
  // A DEVMAP_HASH has GET_NEXT_KEY and LOOKUP_ELEM but no batch lookup (ENOTSUPP): the
  // one-by-one walk. Its values are interface indexes (lo's).
  uint32_t lo = if_nametoindex("lo");
  ASSERT_NE(lo, 0u);
  Entries entries;
  for (uint32_t i = 0; i < 50; ++i)
    entries[bytes_of(i * 977)] = bytes_of(lo);
  Bytes image;
  check_snapshot(MapFd(BPF_MAP_TYPE_DEVMAP_HASH, 4, 4, 64), layout(4, 4, 64), entries, image);
}

TEST(HostMapSnapshot, LpmTrieAndArray) {
  struct TrieKey {
    uint32_t prefixlen;
    uint8_t data[4];
  };
  Entries trie, array;
  for (uint32_t i = 0; i < 20; ++i)
    trie[bytes_of(TrieKey{32, {10, 0, uint8_t(i), 1}})] = bytes_of(uint64_t(i));
  for (uint32_t i = 0; i < 10; ++i)
    array[bytes_of(i)] = bytes_of(uint64_t(i * i));
  Bytes image;
  check_snapshot(MapFd(BPF_MAP_TYPE_LPM_TRIE, 8, 8, 64, BPF_F_NO_PREALLOC), layout(8, 8, 32), trie,
                 image);
  check_snapshot(MapFd(BPF_MAP_TYPE_ARRAY, 4, 8, 10), layout(4, 8, 16), array, image);
}

TEST(HostMapSnapshot, ErrorsAreResults) {
  Bytes image;
  auto l = layout(8, 8, 16);
  auto bad = snapshot_host_map(-1, l, image);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("not a BPF map"), std::string::npos) << bad.error();
  int null_fd = open("/dev/null", O_RDONLY);
  ASSERT_GE(null_fd, 0);
  auto not_map = snapshot_host_map(null_fd, l, image);
  close(null_fd);
  EXPECT_FALSE(not_map);

  MapFd m(BPF_MAP_TYPE_HASH, 8, 8, 16);
  ASSERT_GE(m.fd(), 0) << strerror(errno);
  auto mismatch = snapshot_host_map(m.fd(), layout(16, 8, 16), image);
  ASSERT_FALSE(mismatch);
  EXPECT_NE(mismatch.error().find("key/value size 8/8, expected 16/8"), std::string::npos)
      << mismatch.error();
  EXPECT_FALSE(snapshot_host_map(m.fd(), layout(8, 4, 16), image));
  auto odd = layout(8, 8, 16);
  odd.device.capacity = 12;
  EXPECT_FALSE(snapshot_host_map(m.fd(), odd, image));
  auto narrow = layout(8, 8, 16);
  narrow.device.value_size = 0;
  narrow.device.entry_size = 16;
  EXPECT_FALSE(snapshot_host_map(m.fd(), narrow, image));

  MapFd percpu(BPF_MAP_TYPE_PERCPU_HASH, 8, 8, 16);
  ASSERT_GE(percpu.fd(), 0) << strerror(errno);
  auto pc = snapshot_host_map(percpu.fd(), l, image);
  ASSERT_FALSE(pc);
  EXPECT_NE(pc.error().find("per-CPU"), std::string::npos) << pc.error();
}

// What a snapshot before every launch costs (printed; the bound only catches a gross slowdown).
// The kernel's batch lookup walks every bucket of a hash map: the cost follows the BPF map's
// max_entries more than its entries.
TEST(HostMapSnapshot, CostOfA16EntryMap) {
  for (uint32_t max_entries : {16u, 1024u, 4096u}) {
    MapFd m(BPF_MAP_TYPE_HASH, 8, 8, max_entries);
    ASSERT_GE(m.fd(), 0) << strerror(errno);
    for (uint64_t k = 0; k < 16; ++k)
      m.put(bytes_of(k), bytes_of(k));
    auto l = layout(8, 8, 32);
    Bytes image;
    ASSERT_TRUE(snapshot_host_map(m.fd(), l, image));
    constexpr int kCalls = 20000;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i)
      (void)snapshot_host_map(m.fd(), l, image);
    auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0);
    double per_call = ns.count() / kCalls;
    std::printf("snapshot of a 16-entry BPF hash map (max_entries %u) into 32 slots: %.0f "
                "ns/call\n",
                max_entries, per_call);
    EXPECT_LT(per_call, 1e6);
  }
}

} // namespace
