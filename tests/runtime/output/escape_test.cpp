// Output integrity: any byte a traced program hands us comes out as valid JSON, and text
// output keeps control characters away from the terminal unless asked for raw.
#include "runtime/output/escape.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

#include "runtime/output/output.h"
#include "runtime/output/print_map.h"
#include "tests/support/output_fixtures.h"

namespace gpubt::runtime {
namespace {

using namespace fx;

Message traced(const std::string &s) { return {{{"<", false}, {s, true}, {">\n", false}}}; }

TEST(JsonEscape, WellFormedUtf8AsIsOtherBytesAsLatin1CodePoints) {
  EXPECT_EQ(json_escape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  // bpftrace 0.17: "\uffffffff\uffffffff" (a sign-extended char), which parsers refuse.
  EXPECT_EQ(json_escape("\xff\xfe"), "\\u00ff\\u00fe");
  EXPECT_EQ(json_escape("\xc0\xaf"), "\\u00c0\\u00af");                       // overlong '/'
  EXPECT_EQ(json_escape("\xed\xa0\x80"), "\\u00ed\\u00a0\\u0080");            // a surrogate
  EXPECT_EQ(json_escape("\xf4\x90\x80\x80"), "\\u00f4\\u0090\\u0080\\u0080"); // past U+10FFFF
  EXPECT_EQ(json_escape("\xe2\x82"), "\\u00e2\\u0082");                       // cut short
  EXPECT_EQ(json_escape("\xc3\xa9\xc3"), "\xc3\xa9\\u00c3");
  EXPECT_EQ(json_escape("\"\\\n\r\t\x01\x1b\x7f"), "\\\"\\\\\\n\\r\\t\\u0001\\u001b\x7f");
}

// Every line -f json writes for hostile strings parses with Python's json module and reads
// back as stated (check_json_lines.py); bpftrace 0.17's "\uffffffc3" parses, as U+FFFF and
// "ffc3", but reads back wrong.
TEST(JsonEscape, PythonJsonReadsEveryByteBack) {
  std::vector<std::string> inputs = {"caf\xc3\xa9",
                                     "\xe2\x82\xac\xf0\x9f\x98\x80",
                                     "\xc3\x28",
                                     "\xed\xa0\x80",
                                     "\xe2\x82"
                                     "A",
                                     "\xf8\x88\x80\x80\x80"};
  for (int b = 1; b < 256; b++)
    inputs.push_back(std::string(1, char(b)) + "x");
  std::srand(7);
  for (int n = 0; n < 300; n++) {
    std::string s;
    for (int k = 0; k < 1 + n % 12; k++)
      s += char(1 + std::rand() % 255);
    inputs.push_back(s);
  }
  std::string dir = ::testing::TempDir();
  std::string json_path = dir + "gpubt-json-lines.json", hex_path = dir + "gpubt-json-lines.hex";
  {
    std::ofstream json(json_path, std::ios::binary), hex(hex_path);
    auto out = make_output(OutputFormat::Json, json);
    abi::ProgramSpec spec;
    spec.maps.push_back(map_spec("@s", AggKind::Count, str_t(), uint_t()));
    for (const std::string &s : inputs) {
      out->printf(traced(s));
      out->value(make_value(str_t(), str(s).data(), spec, nullptr));
      print_map(*out, spec, 0, {entry(str(s), {u64(1)})}, nullptr);
      for (unsigned char c : s)
        hex << "0123456789abcdef"[c >> 4] << "0123456789abcdef"[c & 15];
      hex << "\n";
    }
  }
  std::string check = "python3 " GPUBT_SOURCE_DIR "/tests/runtime/output/check_json_lines.py " +
                      json_path + " " + hex_path;
  EXPECT_EQ(std::system(check.c_str()), 0) << check;
}

TEST(EscapeControl, ControlsAndBrokenUtf8AsEscapesTheRestAsIs) {
  EXPECT_EQ(escape_control("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(escape_control("a\nb\tc\rd\x7f\x01"), "a\\nb\\tc\\rd\\x7f\\x01");
  EXPECT_EQ(escape_control("caf\xc3\xa9 C:\\dir"), "caf\xc3\xa9 C:\\dir");
  EXPECT_EQ(escape_control("\xc2\x9b"
                           "2J"),
            "\\xc2\\x9b2J"); // C1 CSI
  EXPECT_EQ(escape_control("\xc2\xa0\xff\x9b"), "\xc2\xa0\\xff\\x9b");
}

// printf("<%s>\n", str), print(str), @[str] = count() on "\x1b[2J" in text output.
TEST(TextOutput, EscapesTracedStringsUnlessRaw) {
  abi::ProgramSpec spec;
  spec.maps.push_back(map_spec("@", AggKind::Count, str_t(), uint_t()));
  ValueType pair = tuple_t({int_t(), str_t(8)});
  auto show = [&](bool raw) {
    std::ostringstream text;
    auto out = make_output(OutputFormat::Text, text, {raw});
    out->printf(traced("\x1b[2J"));
    out->value(make_value(str_t(), str("\x1b[2J").data(), spec, nullptr));
    out->value(make_value(pair, cat({i64(1), str("\x1b", 8)}).data(), spec, nullptr));
    print_map(*out, spec, 0, {entry(str("\x1b[2J\n"), {u64(1)})}, nullptr);
    return text.str();
  };
  EXPECT_EQ(show(false), "<\\x1b[2J>\n\\x1b[2J\n(1, \\x1b)\n@[\\x1b[2J\\n]: 1\n");
  EXPECT_EQ(show(true), "<\x1b[2J>\n\x1b[2J\n(1, \x1b)\n@[\x1b[2J\n]: 1\n");
}

} // namespace
} // namespace gpubt::runtime
