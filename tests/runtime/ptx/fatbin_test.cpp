// runtime/fatbin: fatbins nvcc builds here (every compression mode, a linked executable's
// .nv_fatbin section, the wrapper) and malformed input, which must be an error, never a crash.
#include "runtime/ptx/fatbin.h"

#include <gelf.h>
#include <libelf.h>

#include <fcntl.h>

#include <cstring>
#include <map>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/nvcc_support.h"

namespace gpubt::runtime {
namespace {

using namespace testing;

// Fatbins of tests/programs/ptx/kernels.cu, built once: name -> bytes.
class FatbinTest : public NvccSuite<FatbinTest> {
public:
  static void build(const std::string &dir, std::string &errors) {
    std::string src = kPtxSources + "kernels.cu";
    const std::map<std::string, std::string> variants = {
        {"sm90", "-fatbin -arch=sm_90"},
        {"default", "-fatbin"},
        {"none", "-fatbin --no-compress"},
        {"speed", "-fatbin --compress-mode=speed"},
        {"size", "-fatbin --compress-mode=size"},
        {"all", "-fatbin -arch=sm_90 -Xfatbin -compress-all"},
        {"exe", "-arch=sm_90"},
    };
    for (const auto &[name, flags] : variants) {
      std::string log, out = dir + "/" + name;
      if (run_tool(std::string(kNvcc) + " " + flags + " -o " + out + " " + src, &log) != 0)
        errors += name + ": " + log;
      files_[name] = read_bytes(out);
    }
  }

protected:
  static std::vector<FatbinEntry> entries(const std::string &name) {
    auto r = read_fatbin(files_[name]);
    EXPECT_TRUE(r.ok()) << name << ": " << (r.ok() ? "" : r.error());
    return r.ok() ? *r : std::vector<FatbinEntry>{};
  }
  static const FatbinEntry *find(const std::vector<FatbinEntry> &es, bool ptx) {
    for (const auto &e : es)
      if (e.is_ptx() == ptx && (ptx || e.is_elf()))
        return &e;
    return nullptr;
  }
  static std::string payload_text(const FatbinEntry &e) {
    auto r = entry_payload(e);
    EXPECT_TRUE(r.ok()) << r.error();
    if (!r.ok())
      return "";
    std::string s(r->begin(), r->end());
    return s.substr(0, s.find('\0')); // PTX is NUL-padded
  }

  static inline std::map<std::string, std::vector<uint8_t>> files_;
};

TEST_F(FatbinTest, Sm90HasCubinAndZstdPtx) {
  auto es = entries("sm90");
  ASSERT_EQ(es.size(), 2u);
  const FatbinEntry *elf = find(es, false), *ptx = find(es, true);
  ASSERT_TRUE(elf && ptx);
  EXPECT_EQ(elf->sm_arch, 90u);
  EXPECT_EQ(ptx->sm_arch, 90u);
  EXPECT_TRUE(ptx->flags & kFatbinFlagZstd);
  EXPECT_EQ(ptx->payload[0], 0x28); // zstd frame magic 28 B5 2F FD
  EXPECT_EQ(ptx->payload[3], 0xFD);
  std::string text = payload_text(*ptx);
  EXPECT_NE(text.find(".target sm_90"), std::string::npos);
  EXPECT_NE(text.find(".entry vector_add("), std::string::npos);
  EXPECT_NE(text.find(".entry _Z5scaleIdLi2EEvPT_S0_i("), std::string::npos);
  auto cubin = entry_payload(*elf);
  ASSERT_TRUE(cubin.ok()) << cubin.error();
  ASSERT_GE(cubin->size(), 4u);
  EXPECT_EQ(std::memcmp(cubin->data(),
                        "\x7f"
                        "ELF",
                        4),
            0);
}

TEST_F(FatbinTest, EntryHeadersUseTheirOwnSize) {
  for (const auto &e : entries("sm90")) {
    EXPECT_TRUE(e.header_size == 64 || e.header_size == 80 || e.header_size == 112);
    EXPECT_EQ(e.payload_offset, e.header_offset + e.header_size);
  }
}

TEST_F(FatbinTest, DefaultArchCarriesSm75Ptx) {
  const FatbinEntry *ptx = nullptr;
  auto es = entries("default");
  ASSERT_TRUE(ptx = find(es, true));
  EXPECT_EQ(ptx->sm_arch, 75u);
  EXPECT_TRUE(ptx->flags & kFatbinFlagZstd);
  std::string text = payload_text(*ptx);
  EXPECT_NE(text.find(".target sm_75"), std::string::npos);
  EXPECT_NE(text.find(".entry early_exits("), std::string::npos);
}

// Every codec gives the same PTX and cubin as the uncompressed build.
TEST_F(FatbinTest, CodecsAgreeWithUncompressed) {
  auto plain = entries("none");
  const FatbinEntry *plain_ptx = find(plain, true), *plain_elf = find(plain, false);
  ASSERT_TRUE(plain_ptx && plain_elf);
  EXPECT_FALSE(plain_ptx->compressed());
  std::string want = payload_text(*plain_ptx);
  EXPECT_NE(want.find(".entry vector_add("), std::string::npos);
  std::map<std::string, uint64_t> codec = {
      {"default", kFatbinFlagZstd}, {"speed", kFatbinFlagLz4}, {"size", kFatbinFlagZstd}};
  for (const auto &[name, flag] : codec) {
    auto es = entries(name);
    const FatbinEntry *ptx = find(es, true), *elf = find(es, false);
    ASSERT_TRUE(ptx && elf) << name;
    EXPECT_TRUE(ptx->flags & flag) << name;
    EXPECT_EQ(payload_text(*ptx), want) << name;
    EXPECT_EQ(*entry_payload(*elf), *entry_payload(*plain_elf)) << name;
  }
}

TEST_F(FatbinTest, CompressAllCompressesTheCubin) {
  auto all = entries("all"), sm90 = entries("sm90");
  const FatbinEntry *elf = find(all, false), *plain = find(sm90, false);
  ASSERT_TRUE(elf && plain);
  EXPECT_TRUE(elf->compressed());
  EXPECT_FALSE(plain->compressed());
  auto a = entry_payload(*elf), b = entry_payload(*plain);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

// The executable's .nv_fatbin section (containers) and .nvFatBinSegment (wrappers pointing at
// them by virtual address).
struct ElfSection {
  std::vector<uint8_t> bytes;
  uint64_t addr = 0;
};
std::map<std::string, ElfSection> read_sections(const std::vector<uint8_t> &file) {
  std::map<std::string, ElfSection> out;
  elf_version(EV_CURRENT);
  Elf *elf =
      elf_memory(const_cast<char *>(reinterpret_cast<const char *>(file.data())), file.size());
  size_t shstrndx = 0;
  if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
    return out;
  for (Elf_Scn *scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr sh;
    gelf_getshdr(scn, &sh);
    const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (!name || sh.sh_type == SHT_NOBITS || sh.sh_offset + sh.sh_size > file.size())
      continue;
    out[name] = {{file.begin() + sh.sh_offset, file.begin() + sh.sh_offset + sh.sh_size},
                 sh.sh_addr};
  }
  elf_end(elf);
  return out;
}

TEST_F(FatbinTest, LinkedExecutableSection) {
  auto sections = read_sections(files_["exe"]);
  ASSERT_TRUE(sections.count(".nv_fatbin"));
  const ElfSection &fatbin = sections[".nv_fatbin"];
  auto es = read_fatbin(fatbin.bytes);
  ASSERT_TRUE(es.ok()) << es.error();
  const FatbinEntry *ptx = find(*es, true);
  ASSERT_TRUE(ptx);
  EXPECT_NE(payload_text(*ptx).find(".entry trap_or_exit("), std::string::npos);

  // Each 24-byte wrapper in .nvFatBinSegment points at one container by virtual address (the
  // static cudart brings a container of its own); rebase each onto our copy of the section and
  // read it the way the agent will, from a pointer.
  ASSERT_TRUE(sections.count(".nvFatBinSegment"));
  std::vector<uint8_t> wrappers = sections[".nvFatBinSegment"].bytes;
  ASSERT_EQ(wrappers.size() % 24, 0u);
  ASSERT_GE(wrappers.size(), 24u);
  size_t total = 0;
  for (size_t w = 0; w < wrappers.size(); w += 24) {
    uint32_t magic;
    uint64_t data;
    std::memcpy(&magic, wrappers.data() + w, 4);
    std::memcpy(&data, wrappers.data() + w + 8, 8);
    EXPECT_EQ(magic, kFatbinWrapperMagic);
    ASSERT_GE(data, fatbin.addr);
    ASSERT_LT(data, fatbin.addr + fatbin.bytes.size());
    const uint8_t *container = fatbin.bytes.data() + (data - fatbin.addr);
    std::memcpy(wrappers.data() + w + 8, &container, 8);
    auto span = fatbin_container_at(wrappers.data() + w);
    ASSERT_TRUE(span.ok()) << span.error();
    EXPECT_EQ(span->data(), container);
    auto from_wrapper = read_fatbin(*span);
    ASSERT_TRUE(from_wrapper.ok()) << from_wrapper.error();
    total += from_wrapper->size();
  }
  EXPECT_EQ(total, es->size());
  EXPECT_FALSE(fatbin_container_at("not a fatbin, long enough").ok());
}

TEST_F(FatbinTest, EveryTruncationIsAnError) {
  const auto &full = files_["sm90"];
  for (size_t n = 0; n < full.size(); ++n)
    EXPECT_FALSE(read_fatbin(std::span(full.data(), n)).ok()) << n;
}

TEST_F(FatbinTest, ConcatenatedContainersWithPadding) {
  std::vector<uint8_t> two = files_["sm90"];
  two.resize(two.size() + 8, 0);
  two.insert(two.end(), files_["speed"].begin(), files_["speed"].end());
  auto es = read_fatbin(two);
  ASSERT_TRUE(es.ok()) << es.error();
  EXPECT_EQ(es->size(), 4u);
  for (const auto &e : *es)
    EXPECT_TRUE(entry_payload(e).ok());
}

// Overwrites a field of the first container or its first entry and expects an error.
template <class T> bool rejects(std::vector<uint8_t> bytes, size_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof(T));
  auto r = read_fatbin(bytes);
  if (!r.ok())
    return true;
  for (const auto &e : *r)
    if (!entry_payload(e).ok())
      return true;
  return false;
}

TEST_F(FatbinTest, BadHeadersAreErrors) {
  const auto &f = files_["sm90"];
  EXPECT_TRUE(rejects<uint32_t>(f, 0, 0x12345678));       // container magic
  EXPECT_TRUE(rejects<uint16_t>(f, 4, 2));                // container version
  EXPECT_TRUE(rejects<uint16_t>(f, 6, 8));                // container header size
  EXPECT_TRUE(rejects<uint64_t>(f, 8, ~0ull));            // container size overflows
  EXPECT_TRUE(rejects<uint64_t>(f, 8, f.size()));         // container size past the end
  EXPECT_TRUE(rejects<uint32_t>(f, 16 + 4, 0));           // entry header size 0
  EXPECT_TRUE(rejects<uint32_t>(f, 16 + 4, 63));          // entry header size too small
  EXPECT_TRUE(rejects<uint32_t>(f, 16 + 4, ~0u));         // entry header size overflows
  EXPECT_TRUE(rejects<uint64_t>(f, 16 + 8, ~0ull));       // payload size overflows
  EXPECT_TRUE(rejects<uint64_t>(f, 16 + 8, ~0ull - 100)); // payload size wraps an addition
  EXPECT_TRUE(rejects<uint64_t>(f, 16 + 8, 1));           // payload size leaves a stray tail
  EXPECT_TRUE(rejects<uint64_t>(f, 16 + 40, 0xA011));     // both codecs
}

TEST_F(FatbinTest, BadCompressedPayloadsAreErrors) {
  for (const std::string name : {"sm90", "speed"}) {
    auto es = entries(name);
    const FatbinEntry *ptx = find(es, true);
    ASSERT_TRUE(ptx && ptx->compressed());
    size_t at = ptx->header_offset;
    const auto &f = files_[name];
    EXPECT_TRUE(rejects<uint64_t>(f, at + 56, ptx->uncompressed_size + 1)) << name;
    EXPECT_TRUE(rejects<uint64_t>(f, at + 56, ptx->uncompressed_size - 1)) << name;
    EXPECT_TRUE(rejects<uint64_t>(f, at + 56, ~0ull)) << name;
    EXPECT_TRUE(rejects<uint32_t>(f, at + 16, uint32_t(ptx->payload.size() + 64))) << name;
    EXPECT_TRUE(rejects<uint32_t>(f, at + 16, uint32_t(ptx->payload.size() / 2))) << name;
    EXPECT_TRUE(rejects<uint64_t>(f, ptx->payload_offset, 0xffffffffffffffffull)) << name;
  }
}

// Random byte flips over every variant: any answer is fine but a crash (run under ASan/UBSan).
TEST_F(FatbinTest, RandomCorruptionNeverCrashes) {
  std::mt19937 rng(5);
  for (const auto &[name, bytes] : files_) {
    if (name == "exe")
      continue;
    for (int round = 0; round < 300; ++round) {
      std::vector<uint8_t> b = bytes;
      for (int k = 0; k < 1 + round % 8; ++k)
        b[rng() % b.size()] ^= uint8_t(1 + rng() % 255);
      if (auto es = read_fatbin(b); es.ok())
        for (const auto &e : *es)
          (void)entry_payload(e).ok();
    }
  }
}

std::vector<uint8_t> bytes_of(std::initializer_list<int> v) { return {v.begin(), v.end()}; }

TEST(Lz4Block, LiteralsMatchesAndOverlap) {
  // "ab" then a match of 6 at offset 2 (overlapping): "abababab"; then literals "xy".
  auto r = lz4_block_decompress(bytes_of({0x22, 'a', 'b', 2, 0, 0x20, 'x', 'y'}), 10);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(std::string(r->begin(), r->end()), "ababababxy");
  // A literal length of 15 + 3 and a match length of 4 + 15 + 1 (extension bytes).
  std::vector<uint8_t> in = bytes_of({0xFF, 3});
  for (int i = 0; i < 18; ++i)
    in.push_back('a' + i);
  for (int x : {18, 0, 1})
    in.push_back(x);
  auto long_run = lz4_block_decompress(in, 18 + 20);
  ASSERT_TRUE(long_run.ok()) << long_run.error();
  EXPECT_EQ(std::string(long_run->begin() + 18, long_run->end()),
            std::string("abcdefghijklmnopqrab"));
}

TEST(Lz4Block, MalformedBlocksAreErrors) {
  EXPECT_FALSE(lz4_block_decompress(bytes_of({0x10}), 1).ok());             // literal missing
  EXPECT_FALSE(lz4_block_decompress(bytes_of({0xF0}), 15).ok());            // length cut
  EXPECT_FALSE(lz4_block_decompress(bytes_of({0xF0, 255, 255}), 600).ok()); // length cut
  EXPECT_FALSE(lz4_block_decompress(bytes_of({0x10, 'a', 1}), 5).ok());     // offset cut
  EXPECT_FALSE(lz4_block_decompress(bytes_of({0x10, 'a', 0, 0}), 5).ok());  // offset 0
  EXPECT_FALSE(lz4_block_decompress(bytes_of({0x10, 'a', 2, 0}), 5).ok());  // before start
  EXPECT_FALSE(lz4_block_decompress(bytes_of({0x1F, 'a', 1, 0}), 30).ok()); // match len cut
  EXPECT_FALSE(lz4_block_decompress(bytes_of({0x10, 'a', 1, 0}), 3).ok());  // past the output
  EXPECT_FALSE(lz4_block_decompress(bytes_of({0x20, 'a', 'b'}), 1).ok());   // past the output
  EXPECT_FALSE(lz4_block_decompress(bytes_of({0x10, 'a'}), 2).ok());        // too short
  EXPECT_FALSE(lz4_block_decompress(bytes_of({0x10, 'a'}), size_t(1) << 40).ok()); // too large
}

} // namespace
} // namespace gpubt::runtime
