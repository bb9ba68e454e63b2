// Kernel name matching (the three spellings a gpu probe's pattern is tried on) and the function
// lists of cubins, as the agent and `gpubt -l 'gpu:*'` read them.
#include <gtest/gtest.h>

#include <cstring>
#include <elf.h>

#include "runtime/ptx/cubin_functions.h"
#include "runtime/ptx/kernel_match.h"

using namespace gpubt;
using namespace gpubt::runtime::ptx;

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
