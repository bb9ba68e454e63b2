// Device map images (built by hand, or snapshots of real BPF maps) written back into real BPF
// maps: exactly the READY entries arrive, host-sized; full maps and bad inputs are errors.
#include <fcntl.h>
#include <net/if.h>

#include <chrono>
#include <cstring>
#include <string>

#include "runtime/abi/device_abi.h"
#include "runtime/cuda_agent/host_map_snapshot.h"
#include "runtime/cuda_agent/host_map_writeback.h"
#include "tests/runtime/cuda_agent/bpf_test_map.h"

using gpubt::agent::HostMapLayout;
using gpubt::agent::snapshot_host_map;
using gpubt::agent::write_back_device_map;
using namespace gpubt::agent::test;

namespace {

// A device map storage as the GPU leaves it: slots set one by one, the rest EMPTY (zero).
class Image {
public:
  explicit Image(const HostMapLayout &l) : l_(l), bytes_(l.device.storage_size(), 0) {
    const auto &d = l.device;
    gpubt_device_map_header h{d.capacity, d.key_size, d.value_size, d.entry_size, 0, 0};
    std::memcpy(bytes_.data(), &h, sizeof(h));
  }
  // KEY and VALUE are the device-sized bytes (padding included: a test may make it dirty).
  void set(uint32_t slot, uint64_t state, const Bytes &key, const Bytes &value) {
    uint8_t *e = bytes_.data() + 32 + uint64_t(slot) * l_.device.entry_size;
    std::memcpy(e, &state, 8);
    std::memcpy(e + 8, key.data(), std::min<size_t>(key.size(), l_.device.key_size));
    std::memcpy(e + 8 + l_.device.key_size, value.data(),
                std::min<size_t>(value.size(), l_.device.value_size));
  }
  const Bytes &bytes() const { return bytes_; }

private:
  HostMapLayout l_;
  Bytes bytes_;
};

Bytes padded(Bytes b, size_t n, uint8_t fill = 0) {
  b.resize(n, fill);
  return b;
}

Bytes string_key(const std::string &s) {
  Bytes k(64, 0);
  std::memcpy(k.data(), s.data(), std::min<size_t>(s.size(), 63));
  return k;
}

void write_back(const MapFd &m, const HostMapLayout &l, const Image &image, uint64_t expected) {
  ASSERT_GE(m.fd(), 0) << strerror(errno);
  uint64_t not_written = 99;
  auto n = write_back_device_map(m.fd(), l, image.bytes().data(), image.bytes().size(),
                                 &not_written);
  ASSERT_TRUE(n) << n.error();
  EXPECT_EQ(*n, expected);
  EXPECT_EQ(not_written, 0u);
}

TEST(HostMapWriteBack, OnlyReadySlots) {
  auto l = layout(8, 8, 16);
  Image image(l);
  image.set(0, GPUBT_SLOT_READY, bytes_of(uint64_t(7)), bytes_of(int64_t(-70)));
  image.set(3, GPUBT_SLOT_BUSY, bytes_of(uint64_t(8)), bytes_of(int64_t(80)));
  image.set(4, GPUBT_SLOT_EMPTY, bytes_of(uint64_t(9)), bytes_of(int64_t(90))); // stale bytes
  image.set(9, GPUBT_SLOT_READY, bytes_of(uint64_t(0)), bytes_of(int64_t(0)));
  image.set(15, GPUBT_SLOT_READY, bytes_of(~uint64_t(0)), bytes_of(int64_t(1) << 40));
  MapFd m(BPF_MAP_TYPE_HASH, 8, 8, 64);
  write_back(m, l, image, 3);
  EXPECT_EQ(m.dump(), (Entries{{bytes_of(uint64_t(7)), bytes_of(int64_t(-70))},
                               {bytes_of(uint64_t(0)), bytes_of(int64_t(0))},
                               {bytes_of(~uint64_t(0)), bytes_of(int64_t(1) << 40)}}));
}

TEST(HostMapWriteBack, PaddingIsNotWritten) {
  // 4-byte keys and 12-byte values in 8- and 16-byte device fields with dirty padding.
  auto l = layout(4, 12, 64);
  Image image(l);
  Entries expected;
  for (uint32_t k = 1; k <= 40; ++k) {
    Bytes value(12, uint8_t(k));
    image.set(k * 3 % 64, GPUBT_SLOT_READY, padded(bytes_of(k), 8, 0xab),
              padded(value, 16, 0xcd));
    expected[bytes_of(k)] = value;
  }
  MapFd m(BPF_MAP_TYPE_HASH, 4, 12, 64);
  write_back(m, l, image, 40);
  EXPECT_EQ(m.dump(), expected);
}

TEST(HostMapWriteBack, StringAndTupleKeys) {
  auto ls = layout(64, 8, 512);
  Image strings(ls);
  Entries expected;
  for (uint32_t i = 0; i < 300; ++i) {
    Bytes key = string_key("kernel_" + std::to_string(i * 31) + (i % 3 ? "_void" : ""));
    strings.set(i, GPUBT_SLOT_READY, key, bytes_of(uint64_t(i)));
    expected[key] = bytes_of(uint64_t(i));
  }
  strings.set(400, GPUBT_SLOT_BUSY, string_key("half_written"), bytes_of(uint64_t(1)));
  MapFd ms(BPF_MAP_TYPE_HASH, 64, 8, 512);
  write_back(ms, ls, strings, 300);
  EXPECT_EQ(ms.dump(), expected);

  auto lt = layout(16, 16, 256);
  Image tuples(lt);
  expected.clear();
  for (int i = 0; i < 200; ++i) {
    Bytes key = bytes_of(TupleKey{uint64_t(1000 + i / 8), i % 8 - 2, 0});
    tuples.set(255 - i, GPUBT_SLOT_READY, key, bytes_of(PairValue{-i, i * 1000}));
    expected[key] = bytes_of(PairValue{-i, i * 1000});
  }
  MapFd mt(BPF_MAP_TYPE_HASH, 16, 16, 256);
  write_back(mt, lt, tuples, 200);
  EXPECT_EQ(mt.dump(), expected);
}

TEST(HostMapWriteBack, ScalarIsKeyZero) {
  auto l = layout(8, 8, 1, true);
  MapFd m(BPF_MAP_TYPE_HASH, 8, 8, 1);
  Image empty(l);
  write_back(m, l, empty, 0);
  EXPECT_TRUE(m.dump().empty());
  Image image(l);
  image.set(0, GPUBT_SLOT_READY, {}, bytes_of(int64_t(-5)));
  write_back(m, l, image, 1);
  EXPECT_EQ(m.dump(), (Entries{{bytes_of(uint64_t(0)), bytes_of(int64_t(-5))}}));
  image.set(0, GPUBT_SLOT_READY, {}, bytes_of(int64_t(12)));
  write_back(m, l, image, 1); // BPF_ANY: replaces
  EXPECT_EQ(m.dump(), (Entries{{bytes_of(uint64_t(0)), bytes_of(int64_t(12))}}));

  auto striped = layout(8, 8, 4, true); // a per-SM scalar aggregation: merged elsewhere
  Image per_sm(striped);
  auto n = write_back_device_map(m.fd(), striped, per_sm.bytes().data(), per_sm.bytes().size());
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().find("must be merged"), std::string::npos) << n.error();
}

// snapshot_host_map then write_back_device_map into a second map: the same contents.
void round_trip(const MapFd &a, const MapFd &b, const HostMapLayout &l, const Entries &entries) {
  ASSERT_GE(a.fd(), 0) << strerror(errno);
  for (const auto &[key, value] : entries)
    a.put(key, value);
  Bytes image;
  auto read = snapshot_host_map(a.fd(), l, image);
  ASSERT_TRUE(read) << read.error();
  EXPECT_EQ(*read, entries.size());
  ASSERT_GE(b.fd(), 0) << strerror(errno);
  auto n = write_back_device_map(b.fd(), l, image.data(), image.size());
  ASSERT_TRUE(n) << n.error();
  EXPECT_EQ(*n, entries.size());
  EXPECT_EQ(b.dump(), entries);
  EXPECT_EQ(a.dump(), entries);
}

TEST(HostMapWriteBack, RoundTripsSnapshots) {
  Entries ints, strings, tuples;
  for (uint32_t k = 0; k < 1000; ++k)
    ints[bytes_of(k * 4096)] = Bytes(12, uint8_t(k));
  round_trip(MapFd(BPF_MAP_TYPE_HASH, 4, 12, 4096), MapFd(BPF_MAP_TYPE_HASH, 4, 12, 1000),
             layout(4, 12, 1024), ints);
  for (int i = 0; i < 300; ++i)
    strings[string_key("s" + std::to_string(i * 7))] = bytes_of(uint64_t(i));
  round_trip(MapFd(BPF_MAP_TYPE_HASH, 64, 8, 512), MapFd(BPF_MAP_TYPE_HASH, 64, 8, 512),
             layout(64, 8, 512), strings);
  for (uint64_t i = 0; i < 100; ++i)
    tuples[bytes_of(std::pair<uint64_t, uint64_t>(i / 10, i % 10))] = bytes_of(i * i);
  round_trip(MapFd(BPF_MAP_TYPE_HASH, 16, 8, 128), MapFd(BPF_MAP_TYPE_HASH, 16, 8, 128),
             layout(16, 8, 128), tuples);
  Entries scalar{{bytes_of(uint64_t(0)), bytes_of(uint64_t(42))}};
  round_trip(MapFd(BPF_MAP_TYPE_HASH, 8, 8, 1), MapFd(BPF_MAP_TYPE_HASH, 8, 8, 1),
             layout(8, 8, 1, true), scalar);
}

TEST(HostMapWriteBack, ReplacesExistingEntries) {
  auto l = layout(8, 8, 16);
  MapFd m(BPF_MAP_TYPE_HASH, 8, 8, 16);
  ASSERT_GE(m.fd(), 0) << strerror(errno);
  m.put(bytes_of(uint64_t(1)), bytes_of(uint64_t(100)));
  m.put(bytes_of(uint64_t(2)), bytes_of(uint64_t(200)));
  Image image(l);
  image.set(5, GPUBT_SLOT_READY, bytes_of(uint64_t(2)), bytes_of(uint64_t(222)));
  image.set(6, GPUBT_SLOT_READY, bytes_of(uint64_t(3)), bytes_of(uint64_t(333)));
  write_back(m, l, image, 2);
  EXPECT_EQ(m.dump(), (Entries{{bytes_of(uint64_t(1)), bytes_of(uint64_t(100))},
                               {bytes_of(uint64_t(2)), bytes_of(uint64_t(222))},
                               {bytes_of(uint64_t(3)), bytes_of(uint64_t(333))}}));
}

TEST(HostMapWriteBack, FullMapWritesWhatFits) {
  // 10 entries already there (updated in place), 20 new ones for the 6 free places.
  auto l = layout(8, 8, 64);
  for (uint32_t flags : {0u, uint32_t(BPF_F_NO_PREALLOC)}) {
    MapFd m(BPF_MAP_TYPE_HASH, 8, 8, 16, flags);
    ASSERT_GE(m.fd(), 0) << strerror(errno);
    Image image(l);
    for (uint64_t k = 0; k < 10; ++k)
      m.put(bytes_of(k), bytes_of(k));
    for (uint64_t k = 0; k < 30; ++k) // old and new keys interleaved
      image.set(uint32_t(k * 2), GPUBT_SLOT_READY, bytes_of(k % 3 == 0 ? k / 3 : 100 + k),
                bytes_of(k + 1000));
    uint64_t not_written = 0;
    auto n = write_back_device_map(m.fd(), l, image.bytes().data(), image.bytes().size(),
                                   &not_written);
    ASSERT_FALSE(n);
    EXPECT_EQ(not_written, 14u);
    EXPECT_NE(n.error().find("14 of 30 entries did not fit (E2BIG), 16 written"),
              std::string::npos)
        << n.error();
    Entries now = m.dump();
    EXPECT_EQ(now.size(), 16u);
    for (uint64_t k = 0; k < 30; k += 3) // every old key updated
      EXPECT_EQ(now[bytes_of(k / 3)], bytes_of(k + 1000));
  }
}

TEST(HostMapWriteBack, MapTypesWithoutBatchUpdate) {
  // A DEVMAP_HASH has no batch update: one UPDATE_ELEM per entry. Values: lo's ifindex.
  uint32_t lo = if_nametoindex("lo");
  ASSERT_NE(lo, 0u);
  auto l = layout(4, 4, 64);
  Image image(l);
  Entries expected;
  for (uint32_t i = 0; i < 50; ++i) {
    image.set(i + 7, GPUBT_SLOT_READY, bytes_of(i * 977), bytes_of(lo));
    expected[bytes_of(i * 977)] = bytes_of(lo);
  }
  MapFd m(BPF_MAP_TYPE_DEVMAP_HASH, 4, 4, 64);
  write_back(m, l, image, 50);
  EXPECT_EQ(m.dump(), expected);
  MapFd small(BPF_MAP_TYPE_DEVMAP_HASH, 4, 4, 20); // and full
  ASSERT_GE(small.fd(), 0);
  uint64_t not_written = 0;
  auto n = write_back_device_map(small.fd(), l, image.bytes().data(), image.bytes().size(),
                                 &not_written);
  ASSERT_FALSE(n);
  EXPECT_EQ(not_written, 30u);
  EXPECT_EQ(small.dump().size(), 20u);
}

TEST(HostMapWriteBack, ArrayIndexesPastTheEndDoNotFit) {
  auto l = layout(4, 8, 16);
  Image image(l);
  for (uint32_t i = 0; i < 12; ++i)
    image.set(i, GPUBT_SLOT_READY, bytes_of(i), bytes_of(uint64_t(i * i)));
  MapFd m(BPF_MAP_TYPE_ARRAY, 4, 8, 10);
  ASSERT_GE(m.fd(), 0) << strerror(errno);
  uint64_t not_written = 0;
  auto n = write_back_device_map(m.fd(), l, image.bytes().data(), image.bytes().size(),
                                 &not_written);
  ASSERT_FALSE(n);
  EXPECT_EQ(not_written, 2u);
  Entries now = m.dump();
  ASSERT_EQ(now.size(), 10u);
  EXPECT_EQ(now[bytes_of(uint32_t(9))], bytes_of(uint64_t(81)));
}

TEST(HostMapWriteBack, ErrorsAreResults) {
  auto l = layout(8, 8, 16);
  Image image(l);
  image.set(1, GPUBT_SLOT_READY, bytes_of(uint64_t(1)), bytes_of(uint64_t(1)));
  const uint8_t *p = image.bytes().data();
  size_t size = image.bytes().size();

  auto bad = write_back_device_map(-1, l, p, size);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("not a BPF map"), std::string::npos) << bad.error();
  int null_fd = open("/dev/null", O_RDONLY);
  ASSERT_GE(null_fd, 0);
  EXPECT_FALSE(write_back_device_map(null_fd, l, p, size));
  close(null_fd);

  MapFd m(BPF_MAP_TYPE_HASH, 8, 8, 16);
  ASSERT_GE(m.fd(), 0) << strerror(errno);
  auto mismatch = write_back_device_map(m.fd(), layout(16, 8, 16), p, size);
  ASSERT_FALSE(mismatch);
  EXPECT_NE(mismatch.error().find("key/value size 8/8, expected 16/8"), std::string::npos)
      << mismatch.error();
  EXPECT_FALSE(write_back_device_map(m.fd(), layout(8, 4, 16), p, size));

  auto small = write_back_device_map(m.fd(), l, p, size - 1);
  ASSERT_FALSE(small);
  EXPECT_NE(small.error().find(std::to_string(size - 1) + " bytes, expected " +
                               std::to_string(size)),
            std::string::npos)
      << small.error();
  EXPECT_FALSE(write_back_device_map(m.fd(), l, nullptr, 0));
  EXPECT_FALSE(write_back_device_map(m.fd(), l, nullptr, size));

  // A header that does not match the layout (another map's image, or stale memory).
  auto other = layout(8, 8, 8);
  Image wrong(other);
  Bytes big = wrong.bytes();
  big.resize(size, 0);
  auto header = write_back_device_map(m.fd(), l, big.data(), big.size());
  ASSERT_FALSE(header);
  EXPECT_NE(header.error().find("header 8x(8+8), expected 16x(8+8)"), std::string::npos)
      << header.error();
  Bytes zeros(size, 0);
  EXPECT_FALSE(write_back_device_map(m.fd(), l, zeros.data(), zeros.size()));
  auto odd = l;
  odd.device.capacity = 12;
  EXPECT_FALSE(write_back_device_map(m.fd(), odd, p, size));

  MapFd percpu(BPF_MAP_TYPE_PERCPU_HASH, 8, 8, 16);
  ASSERT_GE(percpu.fd(), 0) << strerror(errno);
  auto pc = write_back_device_map(percpu.fd(), l, p, size);
  ASSERT_FALSE(pc);
  EXPECT_NE(pc.error().find("per-CPU"), std::string::npos) << pc.error();
  EXPECT_TRUE(m.dump().empty()); // nothing written by a failed call
  // A bigger buffer than the storage (a reused allocation) is fine.
  Bytes bigger = image.bytes();
  bigger.resize(size + 100, 0xff);
  auto ok = write_back_device_map(m.fd(), l, bigger.data(), bigger.size());
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ(*ok, 1u);
}

// What a write back after every launch costs (printed; the bound only catches a gross
// slowdown): 16 READY entries in 32 slots, into BPF maps of several sizes and the per-entry
// path. Keys already there after the first call: each call replaces 16 values.
TEST(HostMapWriteBack, CostOf16Entries) {
  uint32_t lo = if_nametoindex("lo");
  struct Case {
    const char *what;
    uint32_t type, key_size, value_size, max_entries;
  };
  for (Case c : {Case{"hash, max_entries 16", BPF_MAP_TYPE_HASH, 8, 8, 16},
                 Case{"hash, max_entries 1024", BPF_MAP_TYPE_HASH, 8, 8, 1024},
                 Case{"hash, max_entries 4096", BPF_MAP_TYPE_HASH, 8, 8, 4096},
                 Case{"hash, 64-byte string keys", BPF_MAP_TYPE_HASH, 64, 8, 1024},
                 Case{"devmap_hash (UPDATE_ELEM each)", BPF_MAP_TYPE_DEVMAP_HASH, 4, 4, 1024}}) {
    MapFd m(c.type, c.key_size, c.value_size, c.max_entries);
    ASSERT_GE(m.fd(), 0) << strerror(errno);
    auto l = layout(c.key_size, c.value_size, 32);
    Image image(l);
    for (uint32_t k = 0; k < 16; ++k)
      image.set(k * 2, GPUBT_SLOT_READY, padded(bytes_of(uint64_t(k + 1)), c.key_size),
                c.type == BPF_MAP_TYPE_DEVMAP_HASH ? bytes_of(lo) : bytes_of(uint64_t(k)));
    const Bytes &b = image.bytes();
    ASSERT_TRUE(write_back_device_map(m.fd(), l, b.data(), b.size()));
    constexpr int kCalls = 20000;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i)
      (void)write_back_device_map(m.fd(), l, b.data(), b.size());
    auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0);
    double per_call = ns.count() / kCalls;
    std::printf("write back of 16 entries (32 slots) into a BPF %s: %.0f ns/call\n", c.what,
                per_call);
    EXPECT_EQ(m.dump().size(), 16u);
    EXPECT_LT(per_call, 1e6);
  }
}

} // namespace
