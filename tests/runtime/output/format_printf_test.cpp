// printf() against bpftrace 0.17: each expected line is what bpftrace printed for the same
// call in a BEGIN probe (quoted above each test).
#include "runtime/output/format_printf.h"

#include <gtest/gtest.h>

#include "tests/support/output_fixtures.h"

namespace gpubt::runtime {
namespace {

using namespace fx;

// Lays args out one after another, as codegen does with its own offsets.
struct Call {
  abi::FormatSpec format;
  Bytes payload;
  abi::ProgramSpec spec;
  explicit Call(std::string fmt) { format.format = std::move(fmt); }
  Call &arg(ValueType t, const Bytes &bytes) {
    format.args.push_back({t, uint32_t(payload.size())});
    payload.insert(payload.end(), bytes.begin(), bytes.end());
    return *this;
  }
  Call &i(int64_t v) { return arg(int_t(), i64(v)); }
  Call &s(const std::string &v) { return arg(str_t(), str(v)); }
  std::string run(const Symbolizer &sym = nullptr) const {
    return format_printf(format, payload.data(), payload.size(), spec, sym).joined();
  }
};

// printf("%-8s|%5d|%x|%s|%X|%o|%c|%u\n", "ab", 42, 255, "bpftrace", 255, 8, 65, -1)
TEST(FormatPrintf, BasicConversionsAndWidths) {
  Call c("%-8s|%5d|%x|%s|%X|%o|%c|%u\n");
  c.s("ab").i(42).i(255).s("bpftrace").i(255).i(8).i(65).i(-1);
  EXPECT_EQ(c.run(), "ab      |   42|ff|bpftrace|FF|10|A|4294967295\n");
}

// bpftrace head's %gr: GFP flags by name, compound masks first (the kernel's mmflags.h order),
// leftover bits in hex; widths apply to the text.
TEST(FormatPrintf, GfpFlagsByName) {
  Call c("%gr|%gr|%gr|%gr|%gr|%-14gr|%g\n");
  c.i(0x1).i(0).i(0xcc0).i(0x800 | 0x20 | 0x2).i(0xcc0 | 0x100 | (1ll << 40)).i(0x100);
  EXPECT_EQ(c.run(), "GFP_DMA|0|GFP_KERNEL|GFP_ATOMIC|__GFP_HIGHMEM|GFP_KERNEL|__GFP_ZERO|0x10000000000"
                     "|__GFP_ZERO    |%g\n");
}

// printf("%ld %lu %lld %llu %lx %hd %hhd %hu %hhu\n", -1, -1, -2, -2, -1, 70000, 300, -1, -1)
TEST(FormatPrintf, LengthModifiers) {
  Call c("%ld %lu %lld %llu %lx %hd %hhd %hu %hhu\n");
  c.i(-1).i(-1).i(-2).i(-2).i(-1).i(70000).i(300).i(-1).i(-1);
  EXPECT_EQ(c.run(), "-1 18446744073709551615 -2 18446744073709551614 ffffffffffffffff 4464 44 "
                     "65535 255\n");
}

// printf("%08x|%-5d|%.3s|%10.2s|%%|%p|%5.2d|%-5.3lld|%zd|%jx|%tu\n", 255, 3, "abcdef", "xyz",
//        4096, 7, 65, -3, 255, 9)
TEST(FormatPrintf, FlagsPrecisionAndPercent) {
  Call c("%08x|%-5d|%.3s|%10.2s|%%|%p|%5.2d|%-5.3lld|%zd|%jx|%tu\n");
  c.i(255).i(3).s("abcdef").s("xyz").i(4096).i(7).i(65).i(-3).i(255).i(9);
  EXPECT_EQ(c.run(), "000000ff|3    |abc|        xy|%|0x1000|   07|065  |-3|ff|9\n");
}

// printf("%d %d %u %x %lu %lx %ld\n", 1<<32 | 7, (int32)-1, (int32)-1, (int32)-1, (int8)-1,
//        (uint32)-1, (uint8)200)
TEST(FormatPrintf, IntegersAreSixtyFourBitVarargs) {
  Call c("%d %d %u %x %lu %lx %ld\n");
  c.i((int64_t(1) << 32) | 7)
      .arg(int_t(4), le<int32_t>(-1))
      .arg(int_t(4), le<int32_t>(-1))
      .arg(int_t(4), le<int32_t>(-1))
      .arg(int_t(1), le<int8_t>(-1))
      .arg(uint_t(4), le<uint32_t>(UINT32_MAX))
      .arg(uint_t(1), le<uint8_t>(200));
  EXPECT_EQ(c.run(), "7 -1 4294967295 ffffffff 18446744073709551615 ffffffff 200\n");
}

// printf("100%%\n"); printf("%d%%|%%%d|\n", 5, 6); printf("%d%%\n", 5); printf("<%%>%d|\n", 1)
// Only text before a conversion goes through snprintf; the tail is written as is.
TEST(FormatPrintf, PercentSignsBeforeAndAfterConversions) {
  EXPECT_EQ(Call("100%%\n").run(), "100%%\n");
  EXPECT_EQ(Call("%d%%|%%%d|\n").i(5).i(6).run(), "5%|%6|\n");
  EXPECT_EQ(Call("%d%%\n").i(5).run(), "5%%\n");
  EXPECT_EQ(Call("<%%>%d|\n").i(1).run(), "<%>1|\n");
}

// printf("%p %5c|%-3c|%c\n", 0, 66, 67, 0x263a)
TEST(FormatPrintf, PointersAndChars) {
  EXPECT_EQ(Call("%p %5c|%-3c|%c\n").i(0).i(66).i(67).i(0x263a).run(), "(nil)     B|C  |:\n");
}

// printf("%s|%-6s|%s\n", probe, "é", "a\tb")
TEST(FormatPrintf, ProbesAndBytesWideStrings) {
  Call c("%s|%-6s|%s\n");
  c.spec.probe_names = {"BEGIN"};
  c.arg(ValueType{ValueType::Probe, 8}, u64(0)).s("\xc3\xa9").s("a\tb");
  EXPECT_EQ(c.run(), "BEGIN|\xc3\xa9    |a\tb\n");
}

TEST(FormatPrintf, EnumsAndSymbols) {
  ValueType e{ValueType::Enum, 4};
  e.enum_name = "cudaError";
  e.enum_signed = true;
  Call c("%s=%d %s=%d %s %-6s|\n");
  c.spec.enums["cudaError"] = {{2, "cudaErrorMemoryAllocation"}};
  c.arg(e, le<int32_t>(2)).arg(e, le<int32_t>(2)).arg(e, le<int32_t>(-9)).arg(e, le<int32_t>(-9));
  c.arg(ValueType{ValueType::UserSym, 8}, u64(0x401000))
      .arg(ValueType{ValueType::UserSym, 8}, u64(1));
  auto sym = [](uint64_t a) { return a == 0x401000 ? std::string("main") : std::string("??"); };
  EXPECT_EQ(c.run(sym), "cudaErrorMemoryAllocation=2 -9=-9 main ??    |\n");
}

TEST(FormatPrintf, StringArgsStopAtNulAndShortPayloadsReadZero) {
  Call c("[%s] [%d]\n");
  c.arg(str_t(8), Bytes{'a', 'b', 0, 'z', 'z', 0, 0, 0}).i(7);
  EXPECT_EQ(format_printf(c.format, c.payload.data(), 8, c.spec, nullptr).joined(), "[ab] [0]\n");
}

// The conversions bpftrace counts (format_specifier_re); "%i", "%+d", "%hs" ... are text.
TEST(PrintfConversions, WhatBpftraceCounts) {
  auto convs =
      printf_conversions("%i %+d % d %#x %08x %-5.3lld %hhd %zd %c %lc %hs %p %%d %r %5.x");
  std::vector<std::string> got;
  std::string f = "%i %+d % d %#x %08x %-5.3lld %hhd %zd %c %lc %hs %p %%d %r %5.x";
  for (auto &c : convs)
    got.push_back(f.substr(c.begin, c.end - c.begin));
  EXPECT_EQ(got,
            (std::vector<std::string>{"%08x", "%-5.3lld", "%hhd", "%zd", "%c", "%p", "%d", "%r"}));
  EXPECT_TRUE(convs[1].left);
  EXPECT_EQ(convs[1].width, "5");
  EXPECT_EQ(convs[1].precision, "3");
  EXPECT_EQ(convs[1].length, "ll");
  EXPECT_EQ(convs[1].conv, 'd');
}

} // namespace
} // namespace gpubt::runtime
