// The GPU agent's SDK-free parts: kernel name matching, cubin function lists, and the config
// and results files gpubt and the agent exchange.
#include <gtest/gtest.h>

#include <cstring>
#include <elf.h>

#include "runtime/abi/agent_protocol.h"
#include "runtime/agent/cubin_functions.h"
#include "runtime/agent/kernel_match.h"

using namespace gpubt;
using namespace gpubt::agent;

TEST(KernelMatch, ThreeSpellings) {
  auto n = kernel_names("_Z9vectorAddPKfS0_Pfi");
  EXPECT_EQ(n.demangled, "vectorAdd(float const*, float const*, float*, int)");
  EXPECT_EQ(n.base, "vectorAdd");
  EXPECT_TRUE(kernel_matches("vectorAdd", n));
  EXPECT_TRUE(kernel_matches("vector*", n));
  EXPECT_TRUE(kernel_matches("_Z9vectorAdd*", n));
  EXPECT_TRUE(kernel_matches("vectorAdd(float const*, float const*, float*, int)", n));
  EXPECT_FALSE(kernel_matches("vectorAd", n));
  EXPECT_FALSE(kernel_matches("gemm", n));
}

TEST(KernelMatch, TemplatesNamespacesAndPlainNames) {
  EXPECT_EQ(kernel_names("_ZN2ns3fooIiEEvPT_").base, "foo");
  EXPECT_EQ(kernel_names("_Z4gemmILi4EEvPfS0_").base, "gemm");
  EXPECT_EQ(kernel_names("_ZN7cutlass6KernelINS_4gemm6kernel4GemmIiEEEEvNT_6ParamsE").base,
            "Kernel");
  auto plain = kernel_names("sm90_xmma_gemm_f32f32_tf32");
  EXPECT_EQ(plain.base, "sm90_xmma_gemm_f32f32_tf32");
  EXPECT_TRUE(kernel_matches("*gemm*", plain));
  // `*gemm*` also finds gemm in a template argument of the full signature.
  EXPECT_TRUE(kernel_matches(
      "*gemm*", kernel_names("_ZN7cutlass6KernelINS_4gemm6kernel4GemmIiEEEEvNT_6ParamsE")));
}

TEST(KernelMatch, ProbeMaskBitPerProbe) {
  std::vector<gpubt::abi::DeviceProbeSpec> probes(3);
  probes[0].kernel = "vectorAdd";
  probes[1].kernel = "gemm*";
  probes[2].kernel = "*Add";
  EXPECT_EQ(probe_mask(probes, kernel_names("_Z9vectorAddPKfS0_Pfi")), 0b101u);
  EXPECT_EQ(probe_mask(probes, kernel_names("other")), 0u);
}

TEST(CubinFunctions, TextSectionNames) {
  // A minimal ELF64: null section, .shstrtab, .text.kernelA, .text._Z1bv, .nv.info
  const char names[] = "\0.shstrtab\0.text.kernelA\0.text._Z1bv\0.nv.info";
  std::vector<uint8_t> img(sizeof(Elf64_Ehdr));
  size_t strtab_off = img.size();
  img.insert(img.end(), names, names + sizeof names);
  size_t shoff = (img.size() + 7) & ~size_t(7);
  img.resize(shoff);
  uint32_t name_offsets[] = {0, 1, 11, 25, 37};
  for (int i = 0; i < 5; ++i) {
    Elf64_Shdr sh{};
    sh.sh_name = name_offsets[i];
    if (i == 1) {
      sh.sh_offset = strtab_off;
      sh.sh_size = sizeof names;
    }
    auto *p = reinterpret_cast<uint8_t *>(&sh);
    img.insert(img.end(), p, p + sizeof sh);
  }
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_shoff = shoff;
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = 5;
  eh.e_shstrndx = 1;
  std::memcpy(img.data(), &eh, sizeof eh);
  auto fns = cubin_functions(img.data(), img.size());
  ASSERT_TRUE(fns);
  EXPECT_EQ(*fns, (std::vector<std::string>{"kernelA", "_Z1bv"}));
  // Truncated or not ELF: unknown (the agent then patches and filters at launch).
  EXPECT_FALSE(cubin_functions(img.data(), shoff + 10));
  EXPECT_FALSE(cubin_functions("PTX text", 8));
  EXPECT_FALSE(cubin_functions(nullptr, 0));
}

TEST(AgentProtocol, ConfigRoundTrip) {
  gpubt::abi::AgentConfig c;
  c.cubins = {{"sm_90", "/tmp/x/probes.sm_90.cubin"}, {"sm_80", "/tmp/x/p 80.cubin"}};
  c.probes = {{"gpu:kretprobe:vectorAdd", "vectorAdd", true, "gpubt_probe_0"},
              {"gpu:kprobe:*gemm*", "*gemm*", false, "gpubt_probe_1"}};
  gpubt::abi::DeviceMapSpec m;
  m.capacity = 65536;
  m.key_size = 8;
  m.value_size = 8;
  m.entry_size = 24;
  gpubt::abi::DeviceMapSpec striped = m;
  striped.key_size = 0;
  striped.prefilled = true;
  c.maps = {m, striped};
  c.ring_capacity = 1 << 20;
  c.results_path = "/tmp/x/results.bin";
  c.verbose = true;
  c.launch_state = true;
  c.clock = true;
  c.events_fd = 7;
  auto back = gpubt::abi::parse_agent_config(gpubt::abi::write_agent_config(c));
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->cubins.size(), 2u);
  EXPECT_EQ(back->cubins[1].path, "/tmp/x/p 80.cubin");
  ASSERT_EQ(back->probes.size(), 2u);
  EXPECT_EQ(back->probes[1].name, "gpu:kprobe:*gemm*");
  EXPECT_EQ(back->probes[1].kernel, "*gemm*");
  EXPECT_FALSE(back->probes[1].exit);
  EXPECT_TRUE(back->probes[0].exit);
  EXPECT_EQ(back->probes[0].function, "gpubt_probe_0");
  ASSERT_EQ(back->maps.size(), 2u);
  EXPECT_EQ(back->maps[0].storage_size(), m.storage_size());
  EXPECT_FALSE(back->maps[0].prefilled);
  EXPECT_TRUE(back->maps[1].prefilled);
  EXPECT_EQ(back->ring_capacity, 1u << 20);
  EXPECT_EQ(back->results_path, c.results_path);
  EXPECT_TRUE(back->verbose);
  EXPECT_TRUE(back->launch_state);
  EXPECT_TRUE(back->clock);
  EXPECT_EQ(back->events_fd, 7);
  EXPECT_EQ(gpubt::abi::parse_agent_config("")->events_fd, -1);
}

TEST(AgentProtocol, ConfigErrors) {
  EXPECT_FALSE(gpubt::abi::parse_agent_config("bogus\n"));
  EXPECT_FALSE(gpubt::abi::parse_agent_config("probe\tmiddle\tf\tn\tk\n"));
  EXPECT_FALSE(gpubt::abi::parse_agent_config("map\t16\t8\t8\t8\t0\n")); // entry too small
  EXPECT_FALSE(gpubt::abi::parse_agent_config("ring\t-1\n"));
  EXPECT_TRUE(gpubt::abi::parse_agent_config("# comment\n\n"));
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
