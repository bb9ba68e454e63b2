// The rule for attach points this machine does not have (the lookup answers from a list here;
// the real lookups, tracefs and ELF symbols, are tested end to end in tests/e2e bad_input).
#include <gtest/gtest.h>

#include "frontend/parse/parse.h"
#include "frontend/passes/check_attach_points.h"
#include "frontend/nearest_name.h"

namespace gpubt::frontend {
namespace {

struct Checked {
  std::string diagnostics;
  std::vector<size_t> points; // attach points left per probe
};

Checked check(const std::string &text) {
  SourceFile file("stdin", text);
  Diagnostics diags;
  auto program = parse_program(file, diags);
  if (!program || diags.has_errors())
    return {"PARSE FAILED", {}};
  check_attach_points(*program, [](const AttachPoint &ap) -> AttachPointStatus {
    if (ap.func.rfind("gone", 0) == 0)
      return {AttachPointStatus::Missing, "tracepoint not found: " + ap.target + ":" + ap.func,
              ap.func == "gone2" ? "did you mean 'x:here'?" : ""};
    return {};
  }, diags);
  Checked out{diags.render(file), {}};
  for (const auto &p : program->probes)
    out.points.push_back(p->attach_points.size());
  return out;
}

TEST(CheckAttachPoints, AloneMissingIsAnErrorAtItsPlace) {
  auto c = check("BEGIN { } t:x:gone2 { }");
  EXPECT_EQ(c.diagnostics, "stdin:1:11-20: ERROR: tracepoint not found: x:gone2 (did you mean "
                           "'x:here'?)\nBEGIN { } t:x:gone2 { }\n          ~~~~~~~~~\n");
}

TEST(CheckAttachPoints, MissingAmongOthersIsDroppedWithAWarning) {
  auto c = check("t:x:here,t:x:gone { }");
  EXPECT_EQ(c.diagnostics, "stdin:1:10-18: WARNING: tracepoint not found: x:gone\n"
                           "t:x:here,t:x:gone { }\n         ~~~~~~~~\n");
  EXPECT_EQ(c.points, std::vector<size_t>{1});
  // All of a probe's points missing: the last one left is an error.
  EXPECT_NE(check("t:x:gone,t:x:gone1 { }").diagnostics.find("ERROR"), std::string::npos);
}

TEST(CheckAttachPoints, NearestName) {
  std::vector<std::string> names = {"cudaMalloc", "cudaFree", "cudaMallocHost", "add"};
  EXPECT_EQ(nearest_name("cudaMaloc", names), "cudaMalloc");
  EXPECT_EQ(nearest_name("cudafree", names), "cudaFree");
  EXPECT_EQ(nearest_name("cudaMalloc", names), "") << "itself is no near miss";
  EXPECT_EQ(nearest_name("ad", names), "") << "too short to guess";
  EXPECT_EQ(nearest_name("memcpy", names), "");
  EXPECT_EQ(nearest_name("cudaFere", names), "cudaFree") << "a swap of neighbours is one slip";
  EXPECT_EQ(nearest_name("cuont", {"count", "hist"}), "count");
  // Three letters allow no edit but a swap of neighbours: a builtin typed fast.
  EXPECT_EQ(nearest_name("tdi", {"tid", "pid", "uid"}), "tid");
  EXPECT_EQ(nearest_name("pdi", {"tid", "pid", "uid"}), "pid");
  EXPECT_EQ(nearest_name("xid", {"tid", "pid", "uid"}), "") << "a substitution is another word";
  EXPECT_EQ(nearest_name("da", {"ad"}), "") << "two letters: too short to guess";
}

TEST(CheckAttachPoints, NearestNamesAreTheFewNearestEachOnce) {
  std::vector<std::string> names = {"getpw", "getpid", "getpt", "getpid", "getppid", "setpid"};
  EXPECT_EQ(nearest_names("getpi", names, 3), (std::vector<std::string>{"getpw", "getpid", "getpt"}));
  EXPECT_EQ(nearest_names("getpi", names, 2), (std::vector<std::string>{"getpw", "getpid"}));
  EXPECT_EQ(nearest_names("abcdefX", {"abcdeXY", "abcdefg"}, 3),
            (std::vector<std::string>{"abcdefg", "abcdeXY"}))
      << "nearest first";
  EXPECT_EQ(did_you_mean_hint({"a"}), "did you mean 'a'?");
  EXPECT_EQ(did_you_mean_hint({"a", "b"}), "did you mean 'a' or 'b'?");
  EXPECT_EQ(did_you_mean_hint({"a", "b", "c"}), "did you mean 'a', 'b' or 'c'?");
  EXPECT_EQ(did_you_mean_hint({}), "");
}

} // namespace
} // namespace gpubt::frontend
