// The config and results files gpubt and the agent exchange.
#include <gtest/gtest.h>


#include "runtime/abi/agent_protocol.h"

using namespace gpubt;

TEST(AgentProtocol, ConfigRoundTrip) {
  gpubt::abi::AgentConfig c;
  c.cubins = {{"sm_90", "/tmp/x/probes.sm_90.cubin"}, {"sm_80", "/tmp/x/p 80.cubin"}};
  c.device.probes = {{"gpu:kretprobe:vectorAdd",
                      "vectorAdd",
                      {gpubt::abi::ProbePointKind::Exit},
                      "gpubt_probe_0",
                      "gpubt_probe_0"},
                     {"gpu:kprobe:*gemm*",
                      "*gemm*",
                      {gpubt::abi::ProbePointKind::Entry},
                      "gpubt_probe_1",
                      "gpubt_dispatch_enter"},
                     {"gpu:memory:k",
                      "k",
                      {gpubt::abi::ProbePointKind::MemoryAccess, gpubt::abi::AccessWrite},
                      "gpubt_probe_2",
                      ""}};
  gpubt::abi::DeviceMapSpec m;
  m.capacity = 65536;
  m.key_size = 8;
  m.value_size = 8;
  m.entry_size = 24;
  gpubt::abi::DeviceMapSpec striped = m;
  striped.key_size = 0;
  striped.prefilled = true;
  c.device.maps = {m, striped};
  c.device.ring_capacity = 1 << 20;
  c.results_path = "/tmp/x/results.bin";
  c.verbose = true;
  c.device.launch_state = true;
  c.device.features = gpubt::abi::DeviceReadsClock;
  c.events_fd = 7;
  auto back = gpubt::abi::parse_agent_config(gpubt::abi::write_agent_config(c));
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->cubins.size(), 2u);
  EXPECT_EQ(back->cubins[1].path, "/tmp/x/p 80.cubin");
  ASSERT_EQ(back->device.probes.size(), 3u);
  EXPECT_EQ(back->device.probes[1].patch, "gpubt_dispatch_enter");
  EXPECT_EQ(back->device.probes[2].point, c.device.probes[2].point); // a point with an argument
  EXPECT_EQ(back->device.probes[2].patch, "gpubt_probe_2"); // none written: its own
  EXPECT_EQ(back->device.probes[1].name, "gpu:kprobe:*gemm*");
  EXPECT_EQ(back->device.probes[1].kernel, "*gemm*");
  EXPECT_EQ(back->device.probes[1].point.kind, gpubt::abi::ProbePointKind::Entry);
  EXPECT_EQ(back->device.probes[0].point.kind, gpubt::abi::ProbePointKind::Exit);
  EXPECT_EQ(back->device.probes[0].function, "gpubt_probe_0");
  ASSERT_EQ(back->device.maps.size(), 2u);
  EXPECT_EQ(back->device.maps[0].storage_size(), m.storage_size());
  EXPECT_FALSE(back->device.maps[0].prefilled);
  EXPECT_TRUE(back->device.maps[1].prefilled);
  EXPECT_EQ(back->device.ring_capacity, 1u << 20);
  EXPECT_EQ(back->results_path, c.results_path);
  EXPECT_TRUE(back->verbose);
  EXPECT_TRUE(back->device.launch_state);
  EXPECT_TRUE(back->reads_clock());
  EXPECT_EQ(back->events_fd, 7);
  EXPECT_EQ(gpubt::abi::parse_agent_config("")->events_fd, -1);
}

TEST(AgentProtocol, ConfigErrors) {
  EXPECT_FALSE(gpubt::abi::parse_agent_config("bogus\n"));
  EXPECT_FALSE(gpubt::abi::parse_agent_config("probe\tmiddle\tf\tn\tk\n"));
  EXPECT_FALSE(gpubt::abi::parse_agent_config("probe\texit:2\tf\tn\tk\n")); // no argument
  EXPECT_FALSE(gpubt::abi::parse_agent_config("probe\tmemory:64\tf\tn\tk\n"));
  EXPECT_TRUE(gpubt::abi::parse_agent_config("probe\tmemory:3\tf\tn\tk\n"));
  // kinds and spaces: gpu:load:global (AccessRead | AccessGlobal)
  auto load_global = gpubt::abi::parse_agent_config("probe\tmemory:9\tf\tn\tk\n");
  ASSERT_TRUE(load_global);
  EXPECT_EQ(load_global->device.probes[0].point.access,
            gpubt::abi::AccessRead | gpubt::abi::AccessGlobal);
  EXPECT_TRUE(gpubt::abi::parse_agent_config("probe\tbarrier\tf\tn\tk\n"));
  EXPECT_FALSE(gpubt::abi::parse_agent_config("map\t16\t8\t8\t8\t0\n")); // entry too small
  EXPECT_FALSE(gpubt::abi::parse_agent_config("ring\t-1\n"));
  EXPECT_TRUE(gpubt::abi::parse_agent_config("# comment\n\n"));
}

// The GPU suite's hand-written configs (tests/gpu/run_suite.py) name no patch function: each
// probe's own is patched (an empty one made the agent patch nothing, on the H100).
TEST(AgentProtocol, ConfigWithoutPatchFunctionsPatchesEachProbesOwn) {
  auto c = gpubt::abi::parse_agent_config("probe\texit\tgpubt_probe_0\tgpu:kretprobe:k\tk\n"
                                          "probe\tenter\tgpubt_probe_1\tgpu:kprobe:k\tk\tdisp\n");
  ASSERT_TRUE(c);
  ASSERT_EQ(c->device.probes.size(), 2u);
  EXPECT_EQ(c->device.probes[0].patch, "gpubt_probe_0");
  EXPECT_EQ(c->device.probes[1].patch, "disp");
}

TEST(AgentProtocol, ResultsRoundTripAndCorruption) {
  gpubt::abi::AgentResults r;
  gpubt::abi::DeviceImage img;
  img.device = 1;
  img.probe_launches = {3, 0};
  img.maps = {{1, 2, 3}, {}};
  img.ring_records = {9, 9, 9, 9, 9, 9, 9, 9};
  img.ring_drops = 7;
  r.images = {img, img};
  r.messages = {"gpu:kprobe:x: no kernel launch matched 'x'"};
  std::string bytes = gpubt::abi::write_agent_results(r);
  auto back = gpubt::abi::parse_agent_results(bytes);
  ASSERT_TRUE(back) << back.error();
  ASSERT_EQ(back->images.size(), 2u);
  EXPECT_EQ(back->images[1].device, 1);
  EXPECT_EQ(back->images[1].probe_launches, img.probe_launches);
  EXPECT_EQ(back->images[1].maps, img.maps);
  EXPECT_EQ(back->images[1].ring_records, img.ring_records);
  EXPECT_EQ(back->images[1].ring_drops, 7u);
  EXPECT_EQ(back->messages, r.messages);
  for (size_t cut : {size_t(0), size_t(7), size_t(20), bytes.size() - 1})
    EXPECT_FALSE(gpubt::abi::parse_agent_results(bytes.substr(0, cut))) << cut;
}
