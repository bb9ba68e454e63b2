// Map creation, program loading (map fd patching, verifier log) and whole-map operations.
#include "bpf_asm.h"
#include "runtime/bpf/loader.h"
#include "runtime/bpf/map_ops.h"
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>

using namespace gpubt;
using namespace gpubt::runtime;
using gpubt::test::BpfAsm;
namespace gabi = gpubt::abi; // plain `abi` clashes with cxxabi.h's ::abi

TEST(Loader, MapNames) {
  EXPECT_EQ(bpf_map_name("@x"), "AT_x");
  EXPECT_EQ(bpf_map_name("@"), "AT_");
  EXPECT_EQ(bpf_map_name("@a_very_long_map_name"), "AT_a_very_long_");
}

TEST(Loader, CreatesMapsAndLoadsProgramWithMapReference) {
  gabi::ProgramSpec spec;
  spec.maps = {test::array_map("@a"), test::array_map("@b", BPF_MAP_TYPE_PERCPU_ARRAY)};
  auto maps = create_maps(spec);
  ASSERT_TRUE(maps.ok()) << maps.error();
  ASSERT_EQ(maps->size(), 2u);
  auto p = test::probe(gabi::AttachKind::Uprobe, "uprobe:x:y", "x", "y",
                       BpfAsm().count_in_array(0).count_in_array(1).end());
  auto prog = load_program(p, *maps);
  ASSERT_TRUE(prog.ok()) << prog.error();
  EXPECT_GE(prog->get(), 0);
}

TEST(Loader, BadMapIndexIsABug) {
  gabi::ProgramSpec spec;
  spec.maps = {test::array_map("@a")};
  auto maps = create_maps(spec);
  ASSERT_TRUE(maps.ok());
  auto p = test::probe(gabi::AttachKind::Uprobe, "uprobe:x:y", "x", "y",
                       BpfAsm().count_in_array(3).end());
  auto prog = load_program(p, *maps);
  ASSERT_FALSE(prog.ok());
  EXPECT_EQ(prog.error(), "BUG: uprobe:x:y: instruction 3 references map 3 of 1");
}

TEST(Loader, VerifierRejectionCarriesTheLog) {
  std::vector<UniqueFd> none;
  // r0 = r2 reads an uninitialised register.
  auto p = test::probe(gabi::AttachKind::Tracepoint, "tracepoint:a:b", "a", "b",
                       BpfAsm().mov_reg(BPF_REG_0, BPF_REG_2).end());
  auto prog = load_program(p, none);
  ASSERT_FALSE(prog.ok());
  EXPECT_EQ(
      prog.error().rfind("Error loading BPF program for tracepoint:a:b: Permission denied\n", 0),
      0u)
      << prog.error();
  EXPECT_NE(prog.error().find("R2 !read_ok"), std::string::npos) << prog.error();
}

TEST(MapOps, ReadClearZeroHash) {
  gabi::ProgramSpec spec;
  gabi::MapSpec m = test::array_map("@h", BPF_MAP_TYPE_HASH, 8, 16);
  m.key_size = 8;
  spec.maps = {m};
  auto maps = create_maps(spec);
  ASSERT_TRUE(maps.ok());
  int fd = (*maps)[0].get();
  for (uint64_t k = 1; k <= 3; ++k) {
    uint64_t v = k * 10;
    ASSERT_EQ(bpf_map_update_elem(fd, &k, &v, BPF_ANY), 0);
  }
  auto data = read_map(fd, m);
  ASSERT_EQ(data.size(), 3u);
  uint64_t sum = 0;
  for (auto &e : data) {
    ASSERT_EQ(e.key.size(), 8u);
    ASSERT_EQ(e.values.size(), 1u);
    uint64_t k, v;
    memcpy(&k, e.key.data(), 8);
    memcpy(&v, e.values[0].data(), 8);
    EXPECT_EQ(v, k * 10);
    sum += v;
  }
  EXPECT_EQ(sum, 60u);
  zero_map(fd, m);
  data = read_map(fd, m);
  ASSERT_EQ(data.size(), 3u);
  for (auto &e : data)
    EXPECT_EQ(e.values[0], std::vector<uint8_t>(8, 0));
  clear_map(fd, m);
  EXPECT_TRUE(read_map(fd, m).empty());
}

// The GPU's values copied for host probes to read: a per-CPU map holds exactly the rows given,
// each in CPU 0's slot (the other CPUs' zero), a key no longer there deleted.
TEST(MapOps, ReplaceRowsOfAPerCpuHash) {
  gabi::MapSpec m = test::array_map("@g", BPF_MAP_TYPE_PERCPU_HASH, 16, 2);
  m.key_size = 8;
  gabi::ProgramSpec spec;
  spec.maps = {m};
  auto maps = create_maps(spec);
  ASSERT_TRUE(maps.ok()) << maps.error();
  int fd = (*maps)[0].get();
  size_t ncpus = size_t(libbpf_num_possible_cpus());
  std::vector<uint64_t> stale(2 * ncpus, 1);
  uint64_t gone = 9;
  ASSERT_EQ(bpf_map_update_elem(fd, &gone, stale.data(), BPF_ANY), 0);
  auto row = [](uint64_t key, uint64_t a, uint64_t b) {
    MapEntry e;
    e.key.resize(8);
    memcpy(e.key.data(), &key, 8);
    e.values.emplace_back(16);
    memcpy(e.values[0].data(), &a, 8);
    memcpy(e.values[0].data() + 8, &b, 8);
    return e;
  };
  auto refused = replace_map_rows(fd, m, {row(1, 100, 4), row(2, 7, 1)});
  ASSERT_TRUE(refused.ok()) << refused.error();
  EXPECT_EQ(*refused, 0u);
  auto data = read_map(fd, m);
  ASSERT_EQ(data.size(), 2u);
  for (auto &e : data) {
    uint64_t k, words[2];
    memcpy(&k, e.key.data(), 8);
    ASSERT_EQ(e.values.size(), ncpus);
    memcpy(words, e.values[0].data(), 16);
    EXPECT_EQ(words[0], k == 1 ? 100u : 7u);
    EXPECT_EQ(words[1], k == 1 ? 4u : 1u);
    for (size_t c = 1; c < ncpus; ++c)
      EXPECT_EQ(e.values[c], std::vector<uint8_t>(16, 0)) << "cpu " << c;
  }
  // A full map refuses the rows past its max_entries: counted, not an error.
  refused = replace_map_rows(fd, m, {row(3, 1, 1), row(4, 1, 1), row(5, 1, 1)});
  ASSERT_TRUE(refused.ok()) << refused.error();
  EXPECT_EQ(*refused, 1u);
  EXPECT_EQ(read_map(fd, m).size(), 2u);
}

TEST(MapOps, PerCpuValuesAndGlobals) {
  gabi::MapSpec m = test::array_map("@p", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 2);
  gabi::ProgramSpec spec;
  spec.maps = {m, test::array_map("globals", BPF_MAP_TYPE_ARRAY, 16)};
  auto maps = create_maps(spec);
  ASSERT_TRUE(maps.ok());
  auto data = read_map((*maps)[0].get(), m);
  ASSERT_EQ(data.size(), 2u); // arrays always hold max_entries keys
  EXPECT_EQ(data[0].values.size(), size_t(libbpf_num_possible_cpus()));
  EXPECT_EQ(data[0].values[0].size(), 4u);

  ASSERT_TRUE(write_globals((*maps)[1].get(), spec.maps[1], 1234, 99).ok());
  auto g = read_map((*maps)[1].get(), spec.maps[1]);
  ASSERT_EQ(g.size(), 1u);
  uint64_t words[2];
  memcpy(words, g[0].values[0].data(), 16);
  EXPECT_EQ(words[0], 1234u);
  EXPECT_EQ(words[1], 99u);
}
