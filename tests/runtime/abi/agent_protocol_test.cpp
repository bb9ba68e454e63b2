// The agent config's hostmap lines (maps host probes write and gpu probes read, or the other way
// round): written from a ProgramSpec, parsed back with from_host or to_host set on their device
// maps, and the malformed ones refused.
#include "runtime/abi/agent_protocol.h"

#include <gtest/gtest.h>
#include <linux/bpf.h>

namespace gpubt::abi {
namespace {

DeviceMapSpec device_map(int index, uint32_t capacity, uint32_t key, uint32_t value) {
  DeviceMapSpec m;
  m.map_index = index;
  m.capacity = capacity;
  m.key_size = key;
  m.value_size = value;
  m.entry_size = 8 + key + value;
  return m;
}

// @c (count, gpu only), @start[tid] = nsecs and @on = 1 (host -> GPU), as codegen lays them out.
ProgramSpec shared_spec() {
  ProgramSpec spec;
  spec.maps.resize(3);
  spec.maps[0] = {.name = "@c", .agg = AggKind::Count, .bpf_type = BPF_MAP_TYPE_PERCPU_HASH,
                  .key_size = 8, .value_size = 8, .max_entries = 4096};
  spec.maps[1] = {.name = "@on", .bpf_type = BPF_MAP_TYPE_HASH, .key_size = 8, .value_size = 8,
                  .max_entries = 4096};
  spec.maps[2] = {.name = "@start", .bpf_type = BPF_MAP_TYPE_HASH, .key_size = 4,
                  .value_size = 8, .max_entries = 4096};
  spec.device.maps = {device_map(0, 2048, 0, 8), device_map(1, 1, 0, 8),
                      device_map(2, 4096, 8, 8)};
  spec.device.maps[0].prefilled = true;
  spec.device.maps[1].from_host = spec.device.maps[2].from_host = true;
  return spec;
}

TEST(AgentProtocol, HostMapsOfASpec) {
  auto h = host_maps_of(shared_spec());
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].device_map, 1u);
  EXPECT_EQ(h[0].key_size, 8u); // a scalar BPF map's key is a u64 0
  EXPECT_EQ(h[0].value_size, 8u);
  EXPECT_EQ(h[0].fd, -1);
  EXPECT_EQ(h[1].device_map, 2u);
  EXPECT_EQ(h[1].key_size, 4u);
  EXPECT_TRUE(host_maps_of(ProgramSpec{}).empty());
}

TEST(AgentProtocol, HostMapLinesRoundTrip) {
  auto spec = shared_spec();
  AgentConfig c;
  c.device.maps = spec.device.maps;
  c.host_maps = host_maps_of(spec);
  c.host_maps[1].fd = 12;
  std::string text = write_agent_config(c);
  EXPECT_NE(text.find("map\t4096\t8\t8\t24\t0\n"), std::string::npos) << text; // unchanged
  EXPECT_NE(text.find("hostmap\t1\t8\t8\t-1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("hostmap\t2\t4\t8\t12\n"), std::string::npos) << text;
  auto back = parse_agent_config(text);
  ASSERT_TRUE(back) << back.error();
  ASSERT_EQ(back->device.maps.size(), 3u);
  EXPECT_FALSE(back->device.maps[0].from_host);
  EXPECT_TRUE(back->device.maps[0].prefilled);
  EXPECT_TRUE(back->device.maps[1].from_host);
  EXPECT_TRUE(back->device.maps[2].from_host);
  ASSERT_EQ(back->host_maps.size(), 2u);
  EXPECT_EQ(back->host_maps[0].fd, -1);
  EXPECT_EQ(back->host_maps[1].device_map, 2u);
  EXPECT_EQ(back->host_maps[1].key_size, 4u);
  EXPECT_EQ(back->host_maps[1].value_size, 8u);
  EXPECT_EQ(back->host_maps[1].fd, 12);
  // A config without hostmap lines (every config before them) parses as before.
  AgentConfig plain;
  plain.device.maps = spec.device.maps;
  auto old = parse_agent_config(write_agent_config(plain));
  ASSERT_TRUE(old) << old.error();
  EXPECT_TRUE(old->host_maps.empty());
  EXPECT_FALSE(old->device.maps[1].from_host);
}

// @start is written by gpu probes and read by host probes instead: its line says to_host.
TEST(AgentProtocol, ToHostMapLinesRoundTrip) {
  auto spec = shared_spec();
  spec.device.maps[2].from_host = false;
  spec.device.maps[2].to_host = true;
  auto h = host_maps_of(spec);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_FALSE(h[0].to_host);
  EXPECT_TRUE(h[1].to_host);
  EXPECT_EQ(h[1].device_map, 2u);
  EXPECT_EQ(h[1].key_size, 4u);
  EXPECT_EQ(h[1].value_size, 8u);
  AgentConfig c;
  c.device.maps = spec.device.maps;
  c.host_maps = h;
  c.host_maps[1].fd = 7;
  std::string text = write_agent_config(c);
  EXPECT_NE(text.find("hostmap\t1\t8\t8\t-1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("hostmap\t2\t4\t8\t7\tto_host\n"), std::string::npos) << text;
  auto back = parse_agent_config(text);
  ASSERT_TRUE(back) << back.error();
  EXPECT_TRUE(back->device.maps[1].from_host);
  EXPECT_FALSE(back->device.maps[1].to_host);
  EXPECT_FALSE(back->device.maps[2].from_host);
  EXPECT_TRUE(back->device.maps[2].to_host);
  ASSERT_EQ(back->host_maps.size(), 2u);
  EXPECT_FALSE(back->host_maps[0].to_host);
  EXPECT_TRUE(back->host_maps[1].to_host);
  EXPECT_EQ(back->host_maps[1].fd, 7);
  // A 5-field line (every config before to_host) is a from_host map.
  auto old = parse_agent_config("map\t16\t8\t8\t24\t0\nhostmap\t0\t8\t8\t5\n");
  ASSERT_TRUE(old) << old.error();
  EXPECT_TRUE(old->device.maps[0].from_host);
  EXPECT_FALSE(old->device.maps[0].to_host);
  EXPECT_FALSE(old->host_maps[0].to_host);
}

TEST(AgentProtocol, BadHostMapLines) {
  const std::string map = "map\t16\t8\t8\t24\t0\n";
  auto error = [&](const std::string &line) {
    auto r = parse_agent_config(map + line);
    return r ? std::string("parsed") : r.error();
  };
  EXPECT_EQ(error("hostmap\t0\t8\t8\t-1\n"), "parsed");
  EXPECT_EQ(error("hostmap\t1\t8\t8\t-1\n"), "agent config: hostmap names device map 1 of 1");
  EXPECT_EQ(error("hostmap\t0\t8\t8\t3\nhostmap\t0\t8\t8\t4\n"),
            "agent config: two hostmap lines for device map 0");
  EXPECT_EQ(error("hostmap\t0\t16\t8\t-1\n"),
            "agent config: hostmap 0 does not fit its device map's slots");
  EXPECT_EQ(error("hostmap\t0\t8\t8\n"), "agent config line 2: cannot parse 'hostmap\t0\t8\t8'");
  EXPECT_EQ(error("hostmap\t0\t8\t8\t-2\n"),
            "agent config line 2: cannot parse 'hostmap\t0\t8\t8\t-2'");
  EXPECT_EQ(error("hostmap\t0\t8\t8\tx\n"),
            "agent config line 2: cannot parse 'hostmap\t0\t8\t8\tx'");
  EXPECT_EQ(error("hostmap\t0\t8\t8\t-1\tto_host\n"), "parsed");
  EXPECT_EQ(error("hostmap\t0\t8\t8\t-1\tfrom_gpu\n"),
            "agent config line 2: cannot parse 'hostmap\t0\t8\t8\t-1\tfrom_gpu'");
  EXPECT_EQ(error("hostmap\t0\t8\t8\t3\nhostmap\t0\t8\t8\t4\tto_host\n"),
            "agent config: two hostmap lines for device map 0");
  EXPECT_EQ(error("hostmap\t0\t8\t16\t-1\tto_host\n"),
            "agent config: hostmap 0 does not fit its device map's slots");
}

} // namespace
} // namespace gpubt::abi

TEST(AgentProtocol, ResultsCarryShortenedKernelNames) {
  gpubt::abi::AgentResults r;
  r.messages.push_back("m");
  r.kernel_names["k~0123456789ab"] = "a full name";
  auto back = gpubt::abi::parse_agent_results(gpubt::abi::write_agent_results(r));
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->kernel_names, r.kernel_names);
  // An older agent's results end after the messages.
  std::string old = gpubt::abi::write_agent_results(gpubt::abi::AgentResults{{}, {"m"}, {}});
  old.resize(old.size() - 3 * 8); // the kernel names', untraced and kernels' counts
  auto older = gpubt::abi::parse_agent_results(old);
  ASSERT_TRUE(older) << older.error();
  EXPECT_EQ(older->messages, std::vector<std::string>{"m"});
  EXPECT_TRUE(older->kernel_names.empty());
}

TEST(AgentProtocol, ResultsCarryTheKernelsLoadedWhenAProbeMatchedNone) {
  gpubt::abi::AgentResults r;
  r.untraced = 2;
  r.kernels = {"main", "vectorAdd"};
  auto back = gpubt::abi::parse_agent_results(gpubt::abi::write_agent_results(r));
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->kernels, r.kernels);
  EXPECT_EQ(back->untraced, 2u);
  // Results from before the kernels end after the untraced count.
  std::string old = gpubt::abi::write_agent_results(r);
  old.resize(old.size() - 8 - (8 + 4) - (8 + 9)); // the count and two blobs
  auto older = gpubt::abi::parse_agent_results(old);
  ASSERT_TRUE(older) << older.error();
  EXPECT_EQ(older->untraced, 2u);
  EXPECT_TRUE(older->kernels.empty());

  gpubt::abi::DeviceImage launched, idle;
  launched.probe_launches = {3, 0};
  idle.probe_launches = {0, 1};
  EXPECT_FALSE(gpubt::abi::some_probe_unmatched({launched, idle}, 2));
  EXPECT_TRUE(gpubt::abi::some_probe_unmatched({launched}, 2));
  EXPECT_TRUE(gpubt::abi::some_probe_unmatched({}, 1));
}

// -l 'gpu:*' -c: a config with no probes that asks for the kernels' names; others do not.
TEST(AgentProtocol, ListKernelsRoundTrips) {
  gpubt::abi::AgentConfig c;
  c.list_kernels = true;
  c.results_path = "/tmp/x/results.bin";
  std::string text = gpubt::abi::write_agent_config(c);
  EXPECT_NE(text.find("listkernels\t1\n"), std::string::npos) << text;
  auto back = gpubt::abi::parse_agent_config(text);
  ASSERT_TRUE(back) << back.error();
  EXPECT_TRUE(back->list_kernels);
  EXPECT_TRUE(back->device.probes.empty());
  auto plain = gpubt::abi::parse_agent_config(gpubt::abi::write_agent_config({}));
  ASSERT_TRUE(plain) << plain.error();
  EXPECT_FALSE(plain->list_kernels);
}

// gpu:hang probes: the agent is told to watch its launches (running_launches.h).
TEST(AgentProtocol, WatchLaunchesRoundTrips) {
  gpubt::abi::AgentConfig c;
  c.watch_launches = true;
  c.live_ms = 250;
  auto back = gpubt::abi::parse_agent_config(gpubt::abi::write_agent_config(c));
  ASSERT_TRUE(back) << back.error();
  EXPECT_TRUE(back->watch_launches);
  EXPECT_EQ(back->live_ms, 250u);
  auto plain = gpubt::abi::parse_agent_config(gpubt::abi::write_agent_config({}));
  ASSERT_TRUE(plain) << plain.error();
  EXPECT_FALSE(plain->watch_launches);
}

// Launch-level probes: the agent is told to time every launch (finished_launches.h).
TEST(AgentProtocol, TimeLaunchesRoundTrips) {
  gpubt::abi::AgentConfig c;
  c.time_launches = true;
  auto back = gpubt::abi::parse_agent_config(gpubt::abi::write_agent_config(c));
  ASSERT_TRUE(back) << back.error();
  EXPECT_TRUE(back->time_launches);
  EXPECT_FALSE(back->time_launch_calls);
  EXPECT_FALSE(back->watch_launches);
  c.time_launch_calls = true; // launchlate: the launch's call time too
  auto calls = gpubt::abi::parse_agent_config(gpubt::abi::write_agent_config(c));
  ASSERT_TRUE(calls) << calls.error();
  EXPECT_TRUE(calls->time_launch_calls);
  auto plain = gpubt::abi::parse_agent_config(gpubt::abi::write_agent_config({}));
  ASSERT_TRUE(plain) << plain.error();
  EXPECT_FALSE(plain->time_launches);
}
