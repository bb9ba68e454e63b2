// runtime/ptx_instrument on PTX nvcc builds here (sm_90 and sm_75: templates, many kernels,
// early returns, predicated exits, printf) and on hand-written PTX; the real ptxas assembles
// every result, and what was not instrumented must stay byte-identical.
#include "runtime/ptx/ptx_instrument.h"

#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "runtime/abi/probe_point.h"
#include "runtime/ptx/ptx_access_sites.h"
#include "runtime/ptx/ptx_scan.h"
#include "tests/support/nvcc_support.h"

namespace gpubt::runtime {
namespace {

using namespace testing;

const std::string kEarly = "early_exits", kScaleD = "_Z5scaleIdLi2EEvPT_S0_i",
                  kTrap = "trap_or_exit", kSay = "say";

// ptxas -arch=ARCH on PTX; "" when it assembles, else its output.
std::string assemble(const std::string &ptx, const std::string &arch) {
  std::string dir = make_temp_dir();
  { std::ofstream(dir + "/in.ptx") << ptx; }
  std::string log;
  int st = run_tool(std::string(kPtxasTool) + " -arch=" + arch + " -o " + dir + "/out.cubin " +
                        dir + "/in.ptx",
                    &log);
  std::system(("rm -rf " + dir).c_str());
  return st == 0 ? "" : "ptxas " + arch + " failed: " + log;
}

// The output without what the instrumenter inserted.
std::string strip_inserted(const std::string &out) {
  static const std::regex decls(
      "\n// gpubt: begin declarations\n[\\s\\S]*?// gpubt: end declarations\n");
  static const std::regex probes("\n\n// gpubt: begin probes\n[\\s\\S]*?// gpubt: end probes\n");
  static const std::regex line_call(
      "\t\\{ // gpubt: \\w+ probe\n[\\s\\S]*?\t\\} /\\* gpubt \\*/\n");
  static const std::regex inline_call(
      "\\{ // gpubt: \\w+ probe\n[\\s\\S]*?\t\\} /\\* gpubt \\*/ ");
  static const std::regex userdata("\t?\\.reg \\.b64 %gpubt_ud; ld\\.global\\.u64 %gpubt_ud, "
                                   "\\[\\w+\\+\\d+\\]; /\\* gpubt: userdata \\*/(\n| )");
  // A branch to an exit goes past the probe pasted there: to L_gpubt_exit, right before the exit.
  static const std::regex past_probe_label("\t?[\\w$]+_gpubt_exit:(\n| )");
  static const std::regex past_probe_target("([\\w$]+)_gpubt_exit\\b");
  std::string s = std::regex_replace(out, decls, "");
  s = std::regex_replace(s, userdata, "");
  s = std::regex_replace(s, probes, "\n");
  s = std::regex_replace(s, past_probe_label, "");
  s = std::regex_replace(s, past_probe_target, "$1");
  s = std::regex_replace(s, line_call, "");
  return std::regex_replace(s, inline_call, "");
}

// From `.visible .entry NAME(` through the body's closing "}" line (nvcc's layout).
std::string kernel_text(const std::string &ptx, const std::string &name) {
  size_t b = ptx.find(".entry " + name + "(");
  if (b == std::string::npos)
    return "";
  b = ptx.rfind('\n', b) + 1;
  size_t e = ptx.find("\n}\n", b);
  return e == std::string::npos ? "" : ptx.substr(b, e + 3 - b);
}

std::string header_line(const std::string &ptx, const std::string &directive) {
  size_t b = ptx.find("\n" + directive + " ");
  if (b == std::string::npos)
    return "";
  return ptx.substr(b + 1, ptx.find('\n', b + 1) - b - 1);
}

std::string replace_line(std::string s, const std::string &from, const std::string &to) {
  size_t at = s.find(from);
  return at == std::string::npos ? s : s.replace(at, from.size(), to);
}

// PROBES with gpubt_probe_1 also reading %globaltimer: an exit probe whose result may depend on
// when it runs, the kind whose probe moves before a branch that decides an exit.
std::string timed_exit_probe(std::string probes) {
  size_t at = probes.find("ld.param", probes.find("gpubt_probe_1("));
  at = probes.find('\n', at);
  return at == std::string::npos
             ? ""
             : probes.insert(at + 1, "\t{ .reg .b64 %t; mov.u64 %t, %globaltimer; }\n");
}

PtxInstrumentOptions standard_options(const std::string &probes) {
  PtxInstrumentOptions o;
  o.kernels = {{kEarly, "gpubt_probe_0", "gpubt_probe_1"},
               {kScaleD, "", "gpubt_probe_1"},
               {kTrap, "gpubt_probe_0", "gpubt_probe_1"},
               {kSay, "gpubt_probe_0", ""}};
  o.probe_ptx = probes;
  o.max_ptx_isa = 90; // CUDA 13.0's ptxas
  return o;
}

class PtxInstrumentTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    probes90_ = read_text(kPtxSources + "count_probes_sm90.ptx");
    probes75_ = read_text(kPtxSources + "count_probes_sm75.ptx");
    if (!have_cuda_tools())
      return;
    std::string dir = make_temp_dir();
    for (const char *arch : {"sm_90", "sm_75"}) {
      std::string log, out = dir + "/" + arch + ".ptx";
      if (run_tool(std::string(kNvcc) + " -ptx -arch=" + arch + " -o " + out + " " + kPtxSources +
                       "kernels.cu",
                   &log) != 0)
        errors_ += log;
      ptx_[arch] = read_text(out);
    }
    std::string log, out = dir + "/debug.ptx"; // -G: .loc, .file and more exits
    if (run_tool(std::string(kNvcc) + " -G -ptx -arch=sm_90 -o " + out + " " + kPtxSources +
                     "kernels.cu",
                 &log) != 0)
      errors_ += log;
    ptx_["sm_90_debug"] = read_text(out);
    std::system(("rm -rf " + dir).c_str());
  }
  void SetUp() override {
    if (!have_cuda_tools())
      GTEST_SKIP() << "no nvcc/ptxas in /usr/local/cuda/bin";
    ASSERT_EQ(errors_, "");
    ASSERT_FALSE(probes90_.empty());
    ASSERT_FALSE(probes75_.empty());
  }
  static std::string instrument(const std::string &arch, const std::string &probes) {
    auto r = instrument_ptx(ptx_[arch], standard_options(probes));
    EXPECT_TRUE(r.ok()) << r.error();
    return r.ok() ? *r : "";
  }

  static inline std::string errors_, probes90_, probes75_;
  static inline std::map<std::string, std::string> ptx_;
};

TEST_F(PtxInstrumentTest, InstrumentedModulesAssemble) {
  EXPECT_EQ(assemble(instrument("sm_90", probes90_), "sm_90"), "");
  std::string mixed = instrument("sm_75", probes90_); // raised to sm_90 for the probes
  EXPECT_EQ(header_line(mixed, ".target"), ".target sm_90");
  EXPECT_EQ(assemble(mixed, "sm_90"), "");
  std::string sm75 = instrument("sm_75", probes75_);
  EXPECT_EQ(header_line(sm75, ".target"), ".target sm_75");
  EXPECT_EQ(assemble(sm75, "sm_75"), "");
  EXPECT_EQ(assemble(sm75, "sm_90"), "");
  std::string debug = instrument("sm_90_debug", probes90_);
  EXPECT_NE(debug.find("\t.loc\t"), std::string::npos);
  EXPECT_EQ(assemble(debug, "sm_90"), "");
}

TEST_F(PtxInstrumentTest, EverythingElseIsByteIdentical) {
  for (const auto &[arch, probes] : {std::pair{"sm_90", probes90_},
                                     {"sm_75", probes90_},
                                     {"sm_75", probes75_},
                                     {"sm_90_debug", probes90_}}) {
    const std::string &in = ptx_[arch];
    std::string out = instrument(arch, probes);
    std::string want = replace_line(in, header_line(in, ".target"), header_line(out, ".target"));
    want = replace_line(want, header_line(in, ".version"), header_line(out, ".version"));
    EXPECT_EQ(strip_inserted(out), want) << arch;
    for (const std::string &k :
         {"vector_add", "_Z5scaleIfLi1EEvPT_S0_i", "_Z5scaleIlLi4EEvPT_S0_i"})
      EXPECT_NE(out.find(kernel_text(in, k)), std::string::npos) << arch << " " << k;
    // The module's own device function, global and printf string are untouched.
    EXPECT_NE(out.find(".global .align 4 .u32 gpubt_test_counter;"), std::string::npos);
    EXPECT_NE(out.find(".global .align 1 .b8 $str[16]"), std::string::npos);
  }
}

std::string predicate_of(const std::string &line) {
  static const std::regex pred("^\\s*(@!?%?\\w+)\\s");
  std::smatch m;
  return std::regex_search(line, m, pred) ? m[1].str() : "";
}

std::string negated(const std::string &pred) {
  return pred[1] == '!' ? "@" + pred.substr(2) : "@!" + pred.substr(1);
}

// Each ret/exit line of KERNEL with its probe block: right before it (past comments, and past the
// label for branches that ran a probe already), or right before the `@P bra` just before it, which
// the exiting lanes fall through. GUARD: the predicate the probe runs under (!P for the latter).
struct ExitSite {
  std::string exit, block, close, guard;
};
std::vector<ExitSite> exit_sites(const std::string &kernel) {
  static const std::regex exit_line("^\\s*(@!?%?\\w+\\s+)?(ret|exit);$");
  static const std::regex skipped("^\\s*(//.*|[\\w$]+_gpubt_exit:)?$");
  static const std::regex branch("^\\s*@!?%?\\w+\\s+bra\\s.*");
  std::vector<std::string> lines;
  std::stringstream ss(kernel);
  for (std::string l; std::getline(ss, l);)
    lines.push_back(l);
  std::vector<ExitSite> out;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (!std::regex_match(lines[i], exit_line))
      continue;
    size_t at = i - 1;
    while (at > 0 && std::regex_match(lines[at], skipped))
      --at;
    std::string guard = predicate_of(lines[i]);
    if (at > 0 && std::regex_match(lines[at], branch))
      guard = negated(predicate_of(lines[at--]));
    std::string block;
    for (size_t j = at; j > 0 && lines[j].find("// gpubt: exit probe") == std::string::npos;)
      block = lines[--j] + "\n" + block;
    out.push_back({lines[i], block, lines[at], guard});
  }
  return out;
}

// The exit probe's body is pasted before every exit (or the branch deciding it): its registers and
// labels renamed per site, its userdata argument the kernel's %gpubt_ud, skipped unless the
// exit's predicate holds.
TEST_F(PtxInstrumentTest, EveryExitRunsTheExitProbeUnderItsPredicate) {
  for (const std::string arch : {"sm_90", "sm_75"}) {
    std::string out = instrument(arch, probes90_);
    std::map<std::string, size_t> want_exits = {{kEarly, 1}, {kScaleD, 1}, {kTrap, 4}};
    std::set<std::string> prefixes;
    for (const auto &[k, n] : want_exits) {
      auto sites = exit_sites(kernel_text(out, k));
      EXPECT_EQ(sites.size(), n) << arch << " " << k << "\n" << kernel_text(out, k);
      for (const auto &s : sites) {
        EXPECT_EQ(s.close, "\t} /* gpubt */") << k << ": " << s.exit;
        std::smatch m;
        ASSERT_TRUE(std::regex_search(s.block, m, std::regex("\\$(gpubt\\d+_)L__BB1_3")))
            << k << ": the exit probe (gpubt_probe_1) is not pasted:\n" << s.block;
        prefixes.insert(m[1]);
        EXPECT_NE(s.block.find("mov.b64 %" + m[1].str() + "rd4, %gpubt_ud;"), std::string::npos)
            << s.block;
        EXPECT_EQ(s.block.find("call"), std::string::npos) << s.block;
        if (!s.guard.empty())
          EXPECT_NE(s.block.find("\t" + negated(s.guard) + " bra $" + m[1].str() + "done;"),
                    std::string::npos)
              << k << ": " << s.exit << "\n" << s.block;
      }
    }
    EXPECT_EQ(prefixes.size(), 6u) << "each site's names are its own";
    // The predicated forms nvcc keeps from inline asm, and the branches around them.
    std::string trap = kernel_text(out, kTrap);
    EXPECT_NE(trap.find("\t@!p bra $gpubt"), std::string::npos);
    EXPECT_NE(trap.find("\t@!q bra $gpubt"), std::string::npos);
    EXPECT_NE(trap.find("@!q bra.uni skip;"), std::string::npos);
    // `say` has only an entry probe: its ret is untouched.
    EXPECT_EQ(kernel_text(out, kSay).find("L__BB1_"), std::string::npos);
  }
}

TEST_F(PtxInstrumentTest, EntryProbeComesFirstWithItsKernelsUserdata) {
  std::string out = instrument("sm_90", probes90_);
  std::map<std::string, int> index = {{kEarly, 0}, {kScaleD, 1}, {kTrap, 2}, {kSay, 3}};
  for (const auto &[k, i] : index) {
    std::string text = kernel_text(out, k);
    std::string load = "[gpubt_userdata+" + std::to_string(8 * i) + "]";
    EXPECT_NE(text.find(load), std::string::npos) << k;
    if (k == kScaleD)
      continue;
    // Only declarations and blank lines before the entry probe.
    size_t entry = text.find("\t{ // gpubt: entry probe\n");
    ASSERT_NE(entry, std::string::npos) << k;
    std::string before = text.substr(text.find("{\n") + 2, entry - text.find("{\n") - 2);
    EXPECT_TRUE(std::regex_match(before, std::regex("(\t\\.(reg|local) [^\n]*\n|\n)*")))
        << k << before;
  }
  EXPECT_NE(out.find(".visible .global .align 8 .u64 gpubt_userdata[4];"), std::string::npos);
  // Declared before the first kernel, defined after the last; local so ptxas may inline them.
  size_t proto = out.find(".func  (.param .b32 func_retval0) gpubt_probe_0(");
  ASSERT_NE(proto, std::string::npos);
  EXPECT_LT(proto, out.find(".entry"));
  EXPECT_EQ(out.find(".visible .func  (.param .b32 func_retval0) gpubt_probe_0"),
            std::string::npos);
}

TEST_F(PtxInstrumentTest, ProbeNamesClashingWithTheModuleAreRenamed) {
  std::string out = instrument("sm_75", probes75_);
  EXPECT_NE(out.find(".global .align 8 .u64 gpubt_test_counter_gpubt;"), std::string::npos);
  EXPECT_NE(out.find("[gpubt_test_counter_gpubt], 1"), std::string::npos);
  EXPECT_NE(out.find(".global .align 1 .b8 $str_gpubt[4]"), std::string::npos);
}

TEST_F(PtxInstrumentTest, ClashingProbeFunctionNamesAndReinstrumenting) {
  // A module with its own gpubt_probe_1: the probes' one is renamed and still called.
  std::string in = ptx_["sm_90"] + "\n.func gpubt_probe_1() { ret; }\n";
  auto r = instrument_ptx(in, standard_options(probes90_));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_NE(r->find(".func  (.param .b32 func_retval0) gpubt_probe_1_gpubt("), std::string::npos);
  EXPECT_EQ(r->find("call (gpubt_ret), gpubt_probe_1,"), std::string::npos);
  EXPECT_EQ(assemble(*r, "sm_90"), "");
  auto again = instrument_ptx(*r, standard_options(probes90_));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error(), "the PTX module is instrumented already");
}

// Random edits to real PTX and probes: an error or a module, never a crash (ASan/UBSan).
TEST_F(PtxInstrumentTest, RandomCorruptionNeverCrashes) {
  std::mt19937 rng(5);
  const std::string chars = "{}();\"/*@!:\n ";
  for (int round = 0; round < 200; ++round) {
    std::string m = ptx_[round % 2 ? "sm_90" : "sm_75"], p = probes90_;
    std::string &target = round % 3 ? m : p;
    for (int k = 0; k < 1 + round % 5; ++k) {
      size_t at = rng() % target.size();
      if (rng() % 2)
        target.erase(at, 1 + rng() % 8);
      else
        target.insert(at, 1, chars[rng() % chars.size()]);
    }
    (void)instrument_ptx(m, standard_options(p)).ok();
  }
}

// The probes' extern vprintf: the module's `say` declares it already, `untouched` does not.
TEST_F(PtxInstrumentTest, ProbeExternsKeepTheirNames) {
  std::string probes = probes75_ + R"(
.extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.func gpubt_print() {
	.reg .b32 %r<2>;
	{
	.param .b64 a0;
	.param .b64 a1;
	.param .b32 r0;
	st.param.b64 [a0], 0;
	st.param.b64 [a1], 0;
	call.uni (r0), vprintf, (a0, a1);
	}
	ret;
}
)";
  auto o = standard_options(probes);
  o.kernels = {{kSay, "gpubt_probe_0", "gpubt_probe_1"}};
  auto r = instrument_ptx(ptx_["sm_75"], o);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->find("vprintf_gpubt"), std::string::npos);
  EXPECT_EQ(strip_inserted(*r), ptx_["sm_75"]);
  EXPECT_EQ(assemble(*r, "sm_75"), "");
  const std::string alone = ".version 7.0\n.target sm_75\n.address_size 64\n"
                            ".visible .entry k() {\n\tret;\n}\n";
  o.kernels = {{"k", "gpubt_probe_0", ""}};
  r = instrument_ptx(alone, o);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_NE(r->find(".extern .func (.param .b32 func_retval0) vprintf("), std::string::npos);
  EXPECT_EQ(assemble(*r, "sm_75"), "");
}

TEST_F(PtxInstrumentTest, VersionAndTargetCaps) {
  auto o = standard_options(probes90_);
  o.max_sm = 75; // an sm_75 GPU cannot run the sm_90 probes
  EXPECT_FALSE(instrument_ptx(ptx_["sm_75"], o).ok());
  o.max_sm = 90;
  EXPECT_TRUE(instrument_ptx(ptx_["sm_75"], o).ok());
  o.max_sm = 0;
  std::string old = replace_line(ptx_["sm_90"], ".version 9.0", ".version 7.8");
  auto raised = instrument_ptx(old, o); // probes need 8.0
  ASSERT_TRUE(raised.ok()) << raised.error();
  EXPECT_EQ(header_line(*raised, ".version"), ".version 8.0");
  EXPECT_EQ(assemble(*raised, "sm_90"), "");
  o.max_ptx_isa = 78;
  EXPECT_FALSE(instrument_ptx(old, o).ok());
}

TEST_F(PtxInstrumentTest, UnknownNamesAreErrors) {
  auto o = standard_options(probes90_);
  o.kernels.push_back({"no_such_kernel", "gpubt_probe_0", ""});
  auto r = instrument_ptx(ptx_["sm_90"], o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "kernel no_such_kernel is not defined in the PTX module");
  o = standard_options(probes90_);
  o.kernels[0].exit_probe = "gpubt_probe_7";
  EXPECT_FALSE(instrument_ptx(ptx_["sm_90"], o).ok());
  o = standard_options(probes90_);
  o.kernels.push_back(o.kernels[0]);
  EXPECT_FALSE(instrument_ptx(ptx_["sm_90"], o).ok());
  // _Z6helperf is a .func, not a kernel.
  o = standard_options(probes90_);
  o.kernels = {{"_Z6helperf", "gpubt_probe_0", ""}};
  EXPECT_FALSE(instrument_ptx(ptx_["sm_90"], o).ok());
}

// Hand-written PTX with what nvcc rarely emits: comments and strings that look like code,
// parameters over many lines, labels on the exit's line, predicated ret/exit, .weak and
// .extern functions, a kernel that falls off its end.
const char *kTricky = R"(//
// .entry fake_in_comment( ret;
.version 7.0
.target sm_75 // trailing comment
.address_size 64

/* block comment: .visible .entry also_fake() { exit; } */
.extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.global .align 1 .b8 msg[8] = {114, 101, 116, 59, 32, 125, 10, 0};

.weak .func (.param .b32 func_retval0) weak_helper(
	.param .b32 weak_helper_param_0
)
{
	.reg .b32 %r<2>;
	ld.param.b32 %r1, [weak_helper_param_0];
	st.param.b32 [func_retval0], %r1;
	ret;
}

.visible .entry multi_line
(
	.param .u64 multi_line_param_0,   // a comment ) {
	.param .u32 multi_line_param_1
)
.maxntid 128, 1, 1
{
	.reg .pred %p<4>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<3>;
$L__start:
	ld.param.u32 %r1, [multi_line_param_1];
	setp.eq.u32 %p1, %r1, 0;
	setp.eq.u32 %p2, %r1, 1;
	setp.eq.u32 %p3, %r1, 2;
	@%p1 bra $L__out;
$L__again: @%p2 ret;
	@!%p3 exit;
	add.u32 %r1, %r1, 4; setp.gt.u32 %p1, %r1, 100; @%p1 ret.uni;
	bra.uni $L__again;
$L__out:
}

.visible .entry untouched(.param .u64 p0) { ret; }
)";

TEST_F(PtxInstrumentTest, HandWrittenTrickyModule) {
  PtxInstrumentOptions o;
  o.kernels = {{"multi_line", "gpubt_probe_0", "gpubt_probe_1"}};
  o.probe_ptx = probes75_;
  auto r = instrument_ptx(kTricky, o);
  ASSERT_TRUE(r.ok()) << r.error();
  const std::string &out = *r;
  EXPECT_EQ(assemble(out, "sm_75"), "") << out;
  EXPECT_EQ(assemble(out, "sm_90"), "") << out;
  EXPECT_EQ(strip_inserted(out), kTricky);
  EXPECT_NE(out.find(".visible .entry untouched(.param .u64 p0) { ret; }\n"), std::string::npos);
  // The label stays first, so branches to it run the probe too; predicates carry over.
  EXPECT_NE(out.find("$L__again: { // gpubt: exit probe\n"), std::string::npos);
  EXPECT_NE(out.find("\t@!%p2 bra $gpubt"), std::string::npos);
  EXPECT_NE(out.find("\t@%p3 bra $gpubt"), std::string::npos);
  EXPECT_NE(out.find("\t@!%p1 bra $gpubt"), std::string::npos);
  // The entry probe precedes the first label (a loop head may branch back to it otherwise).
  EXPECT_LT(out.find("gpubt: entry probe"), out.find("$L__start:"));
  // Falling off the end after $L__out: is an exit too.
  EXPECT_NE(out.find("$L__out:\n\t{ // gpubt: exit probe"), std::string::npos);
  size_t pasted = 0;
  for (size_t at = 0; (at = out.find("// gpubt: exit probe\n\t{\n", at)) != std::string::npos;
       ++at)
    ++pasted;
  EXPECT_EQ(pasted, 4u);
  EXPECT_EQ(out.find("call (gpubt_ret)"), std::string::npos);
}

// The guard of the exit probe that ends right before LINE in TEXT: its predicate, "" when it
// always runs, "no probe" when none ends there.
std::string probe_guard_before(const std::string &text, const std::string &line) {
  size_t end = text.find("\t} /* gpubt */\n" + line);
  if (end == std::string::npos)
    return "no probe";
  std::string block = text.substr(text.rfind("{ // gpubt: exit probe", end));
  block = block.substr(0, block.find("\t} /* gpubt */\n"));
  std::smatch m;
  static const std::regex skip("\t(@!?%?\\w+) bra \\$gpubt\\d+_done;");
  return std::regex_search(block, m, skip) ? negated(m[1]) : "";
}

size_t count_of(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; ++at)
    ++n;
  return n;
}

size_t exit_probes(const std::string &text) { return count_of(text, "// gpubt: exit probe"); }

// tests/gpu/late_lane.cu: lanes 0-30 leave by `@%p bra L; exit` while lane 31 spins. ptxas makes
// that a predicated EXIT; the probe runs before the branch, under the exit's condition, so the
// early lanes record their exit before they leave, not after lane 31's spin.
TEST_F(PtxInstrumentTest, ProbeForLanesFallingThroughToAnExitRunsBeforeTheBranch) {
  std::string dir = make_temp_dir();
  for (const auto &[arch, counting] : {std::pair{"sm_90", probes90_}, {"sm_75", probes75_}}) {
    std::string probes = timed_exit_probe(counting);
    std::string log, path = dir + "/late_lane.ptx";
    std::string cmd = std::string(kNvcc) + " -ptx -arch=" + arch +
                      " -I" GPUBT_SOURCE_DIR "/tests/gpu -o " + path +
                      " " GPUBT_SOURCE_DIR "/tests/gpu/late_lane.cu";
    ASSERT_EQ(run_tool(cmd, &log), 0) << log;
    std::string in = read_text(path);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        in, m, std::regex("\t(@!?%p\\d+) bra \t\\$L__\\w+;\n\n\t// begin inline asm\n\texit;\n")))
        << in;
    PtxInstrumentOptions o;
    o.kernels = {{"_Z8lateLanePjm", "", "gpubt_probe_1"}};
    o.probe_ptx = probes;
    auto r = instrument_ptx(in, o);
    ASSERT_TRUE(r.ok()) << r.error();
    // The branch and the exit stay as nvcc wrote them, the probe right before them, none between.
    EXPECT_EQ(probe_guard_before(*r, m[0]), negated(m[1])) << *r;
    std::string kernel = kernel_text(*r, "_Z8lateLanePjm");
    EXPECT_EQ(exit_probes(kernel), 2u) << kernel; // that one and the final ret's
    EXPECT_EQ(probe_guard_before(kernel, "\tret;\n"), "") << kernel;
    EXPECT_EQ(strip_inserted(*r), in);
    EXPECT_EQ(assemble(*r, arch), "");
  }
  std::system(("rm -rf " + dir).c_str());
}

// Both shapes of an exit a predicated branch decides, and an exit behind a label that only falls
// through reach.
const char *kDecidedExits = R"(.version 7.0
.target sm_75
.address_size 64

.visible .entry shapes(.param .u32 shapes_n)
{
	.reg .pred %p<4>;
	.reg .b32 %r<4>;
	ld.param.u32 %r1, [shapes_n];
	mov.u32 %r2, %tid.x;
	and.b32 %r3, %r2, 31;
	setp.ne.u32 %p1, %r3, 31;
	@!%p1 bra $L__late;
	exit;
$L__late:
	setp.ge.u32 %p2, %r2, %r1;
	@%p2 bra $L__done;
$L__loop:
	add.u32 %r2, %r2, 32;
	setp.lt.u32 %p3, %r2, %r1;
	@%p3 bra $L__loop;
$L__done:
	ret;
}

.visible .entry labelled(.param .u32 labelled_n)
{
	.reg .pred %p<2>;
	.reg .b32 %r<3>;
	ld.param.u32 %r1, [labelled_n];
	mov.u32 %r2, %tid.x;
$L__loop:
	add.u32 %r2, %r2, 32;
	setp.lt.u32 %p1, %r2, %r1;
	@%p1 bra $L__loop;
$L__end:
	ret;
}
)";

// Each path to an exit runs one exit probe: lanes falling through `@!%p1 bra` run the one before
// it (under %p1); lanes taking `@%p2 bra` run the one before it (under %p2) and branch past the
// one at $L__done, which the lanes arriving from the loop run.
TEST_F(PtxInstrumentTest, ProbeForLanesBranchingToAnExitRunsBeforeTheBranch) {
  PtxInstrumentOptions o;
  o.kernels = {{"shapes", "", "gpubt_probe_1"}, {"labelled", "", "gpubt_probe_1"}};
  o.probe_ptx = timed_exit_probe(probes75_);
  auto r = instrument_ptx(kDecidedExits, o);
  ASSERT_TRUE(r.ok()) << r.error();
  std::string shapes = kernel_text(*r, "shapes"), labelled = kernel_text(*r, "labelled");
  EXPECT_EQ(exit_probes(shapes), 3u) << shapes;
  EXPECT_EQ(probe_guard_before(shapes, "\t@!%p1 bra $L__late;\n\texit;\n$L__late:\n"), "@%p1");
  EXPECT_EQ(probe_guard_before(shapes, "\t@%p2 bra $L__done_gpubt_exit;\n$L__loop:\n"), "@%p2");
  EXPECT_EQ(probe_guard_before(shapes, "\t$L__done_gpubt_exit:\n\tret;\n}"), "") << shapes;
  EXPECT_NE(shapes.find("$L__done:\n\t{ // gpubt: exit probe\n"), std::string::npos);
  EXPECT_NE(shapes.find("\t@%p3 bra $L__loop;\n$L__done:\n"), std::string::npos) << shapes;
  // A label before the exit: the branches to it are not known to be the only way in.
  EXPECT_EQ(exit_probes(labelled), 1u) << labelled;
  EXPECT_NE(labelled.find("\t@%p1 bra $L__loop;\n$L__end:\n\t{ // gpubt: exit probe\n"),
            std::string::npos)
      << labelled;
  EXPECT_EQ(probe_guard_before(labelled, "\tret;\n}"), "");
  EXPECT_EQ(strip_inserted(*r), kDecidedExits);
  EXPECT_EQ(assemble(*r, "sm_75"), "") << *r;
  EXPECT_EQ(assemble(*r, "sm_90"), "") << *r;
}

// nvcc's `if (i >= n) return;` in early_exits: the exit block has other ways in (bra.uni, falling
// through), which keep the probe pasted there; only the deciding branch is retargeted.
TEST_F(PtxInstrumentTest, EarlyReturnBranchSkipsTheProbeAtItsTarget) {
  for (const std::string arch : {"sm_90", "sm_75"}) {
    const std::string &in = ptx_[arch];
    std::string kernel_in = kernel_text(in, kEarly);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(kernel_in, m, std::regex("\t(@%p1) bra \t(\\$L__\\w+);\n")));
    std::string pred = m[1], label = m[2];
    ASSERT_NE(kernel_in.find(label + ":\n\tret;\n"), std::string::npos) << kernel_in;
    std::string out = kernel_text(instrument(arch, timed_exit_probe(probes90_)), kEarly);
    EXPECT_EQ(probe_guard_before(out, "\t" + pred + " bra \t" + label + "_gpubt_exit;\n"), pred)
        << out;
    EXPECT_NE(out.find(label + ":\n\t{ // gpubt: exit probe\n"), std::string::npos) << out;
    EXPECT_EQ(probe_guard_before(out, "\t" + label + "_gpubt_exit:\n\tret;\n"), "") << out;
    // The other ways in stay; the new label has the one branch and its definition.
    std::string other = "\tbra.uni \t" + label + ";\n";
    ASSERT_GT(count_of(kernel_in, other), 0u) << kernel_in;
    EXPECT_EQ(count_of(out, other), count_of(kernel_in, other)) << out;
    EXPECT_EQ(count_of(out, label + "_gpubt_exit"), 2u) << out;
  }
}

// A probe that only counts gives the same result wherever it runs: it stays before the exits
// and no branch is retargeted (hoisting would cost the kernel's hot path).
TEST_F(PtxInstrumentTest, ProbesThatReadNoClockStayAtTheExits) {
  PtxInstrumentOptions o;
  o.kernels = {{"shapes", "", "gpubt_probe_1"}};
  o.probe_ptx = probes75_;
  auto r = instrument_ptx(kDecidedExits, o);
  ASSERT_TRUE(r.ok()) << r.error();
  std::string shapes = kernel_text(*r, "shapes");
  EXPECT_EQ(exit_probes(shapes), 2u) << shapes;
  EXPECT_EQ(shapes.find("_gpubt_exit"), std::string::npos) << shapes;
  EXPECT_NE(shapes.find("\t@!%p1 bra $L__late;\n\t{ // gpubt: exit probe\n"), std::string::npos)
      << shapes;
  EXPECT_EQ(strip_inserted(*r), kDecidedExits);
  EXPECT_EQ(assemble(*r, "sm_75"), "") << *r;
}

TEST(PtxInstrument, MalformedModulesAreErrors) {
  std::string probes = read_text(kPtxSources + "count_probes_sm75.ptx");
  PtxInstrumentOptions o;
  o.kernels = {{"k", "gpubt_probe_0", "gpubt_probe_1"}};
  o.probe_ptx = probes;
  const std::string good = ".version 7.0\n.target sm_75\n.address_size 64\n"
                           ".visible .entry k() {\n\tret;\n}\n";
  EXPECT_TRUE(instrument_ptx(good, o).ok());
  for (const std::string bad : {
           ".version 7.0\n.target sm_75\n.visible .entry k() {\n\tret;\n",   // no '}'
           ".version 7.0\n.target sm_75\n.visible .entry k() {\n\tret\n}\n", // no ';'
           ".version 7.0\n.target sm_75\n.visible .entry k() {\n\t}}\n",     // extra '}'
           ".target sm_75\n.visible .entry k() {\n\tret;\n}\n",              // no .version
           ".version x\n.target sm_75\n.visible .entry k() {\n\tret;\n}\n",  // bad .version
           ".version 7.0\n.target sm_75\n.visible .entry k() { mov.u32 %r1, \"x; }\n}\n",
           ".version 7.0\n.target sm_75\n.global .u32 g = {1, 2\n",
           ".version 7.0\n.target sm_75\n.visible .entry k(\n",
       })
    EXPECT_FALSE(instrument_ptx(bad, o).ok()) << bad;
  // Every prefix of a real module: an error or a module, never a crash (ASan/UBSan).
  for (size_t n = 0; n < good.size(); ++n)
    (void)instrument_ptx(good.substr(0, n), o).ok();
  o.probe_ptx = "{";
  EXPECT_FALSE(instrument_ptx(good, o).ok());
  o.probe_ptx = ".version 7.0\n.target sm_75\n.visible .entry gpubt_probe_0() { ret; }\n";
  EXPECT_FALSE(instrument_ptx(good, o).ok());
}

// --- memory-access and barrier probes (issue 28) ----------------------------------------------

// Lines of KERNEL's body that are memory accesses of the probes' (ld, ldu, st, atom, red of any
// space but .param and .const), counted by their opcode alone; SPACES narrows them ("global|...").
size_t access_lines(const std::string &kernel, const std::string &ops, const std::string &spaces) {
  std::regex line("\n\\s*(@!?%?\\w+\\s+)?(" + ops + ")(\\.\\w+)*?(\\.(" + spaces +
                  "))?(\\.\\w+)*\\s");
  std::regex excluded("\n\\s*(@!?%?\\w+\\s+)?\\w+\\.(param|const)\\.");
  size_t n = 0;
  for (auto it = std::sregex_iterator(kernel.begin(), kernel.end(), line);
       it != std::sregex_iterator(); ++it) {
    std::string m = it->str();
    bool has_space = (*it)[5].matched;
    if (std::regex_search(m, excluded) || (spaces != "\\w+" && !has_space))
      continue;
    ++n;
  }
  return n;
}
size_t occurrences(const std::string &s, const std::string &what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1))
    ++n;
  return n;
}

class PtxMemoryProbesTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    probes_ = read_text(kPtxSources + "mem_probes_sm90.ptx");
    if (!have_cuda_tools())
      return;
    std::string dir = make_temp_dir(), log, out = dir + "/mem.ptx";
    if (run_tool(std::string(kNvcc) + " -ptx -arch=sm_90 -o " + out + " " + kPtxSources +
                     "mem_kernels.cu",
                 &log) != 0)
      errors_ += log;
    ptx_ = read_text(out);
    std::system(("rm -rf " + dir).c_str());
  }
  void SetUp() override {
    if (!have_cuda_tools())
      GTEST_SKIP() << "no nvcc/ptxas in /usr/local/cuda/bin";
    ASSERT_EQ(errors_, "");
    ASSERT_FALSE(probes_.empty());
  }
  // Every kernel with the memory probe (ACCESS: its filter) and the barrier probe.
  static std::string instrument(uint32_t access, bool barrier = true) {
    PtxInstrumentOptions o;
    for (const char *k : {"gather", "reverse_block", "mixed"})
      o.kernels.push_back({k, "", "", "gpubt_probe_0_direct", access,
                           barrier ? "gpubt_probe_1_direct" : ""});
    o.probe_ptx = probes_;
    o.max_ptx_isa = 90;
    auto r = instrument_ptx(ptx_, o);
    EXPECT_TRUE(r.ok()) << r.error();
    return r.ok() ? *r : "";
  }
  static inline std::string errors_, probes_, ptx_;
};

// Every ld/st/atom/red of the kernels (not .param) gets the memory probe, every bar.sync,
// bar.arrive and bar.red the barrier probe; nothing else changes, and ptxas takes it.
TEST_F(PtxMemoryProbesTest, EveryAccessAndBarrierGetsItsProbe) {
  std::string out = instrument(0);
  EXPECT_EQ(assemble(out, "sm_90"), "");
  EXPECT_EQ(strip_inserted(out), ptx_);
  const std::string all = "ld|ldu|st|atom|red";
  // What nvcc makes of mem_kernels.cu, by hand: gather reads and writes once; reverse_block
  // writes count and tile, reads tile and count, atomics on both spaces, two __syncthreads.
  EXPECT_EQ(access_lines(kernel_text(ptx_, "gather"), all, "\\w+"), 2u);
  EXPECT_EQ(access_lines(kernel_text(ptx_, "reverse_block"), all, "\\w+"), 8u);
  for (const char *k : {"gather", "reverse_block", "mixed"}) {
    std::string in = kernel_text(ptx_, k), body = kernel_text(out, k);
    EXPECT_EQ(occurrences(body, "// gpubt: memory probe"), access_lines(in, all, "\\w+")) << k;
    EXPECT_EQ(occurrences(body, "// gpubt: barrier probe"),
              access_lines(in, "bar|barrier", "sync|arrive|red")) << k;
  }
  EXPECT_EQ(occurrences(kernel_text(out, "reverse_block"), "// gpubt: barrier probe"), 2u);
  // mixed: bar.sync 1, 64 and the predicated bar.arrive 2, 32 and __syncthreads_count.
  EXPECT_EQ(occurrences(kernel_text(out, "mixed"), "// gpubt: barrier probe"), 3u);
}

// The kind and space filter: a load-global probe goes only before ld.global and generic loads
// (whose space only the run finds: isspacep, and the probe skips the others).
TEST_F(PtxMemoryProbesTest, AFilterNarrowsTheSites) {
  std::string out = instrument(abi::AccessRead | abi::AccessGlobal, false);
  EXPECT_EQ(assemble(out, "sm_90"), "");
  EXPECT_EQ(strip_inserted(out), ptx_);
  for (const char *k : {"gather", "reverse_block", "mixed"}) {
    std::string in = kernel_text(ptx_, k), body = kernel_text(out, k);
    size_t generic = access_lines(in, "ld|ldu", "\\w+") - access_lines(in, "ld|ldu", "global") -
                     access_lines(in, "ld|ldu", "shared") - access_lines(in, "ld|ldu", "local");
    EXPECT_EQ(occurrences(body, "// gpubt: memory probe"),
              access_lines(in, "ld|ldu", "global") + generic) << k;
    EXPECT_EQ(occurrences(body, "// gpubt: barrier probe"), 0u) << k;
  }
  EXPECT_EQ(occurrences(kernel_text(out, "reverse_block"), "// gpubt: memory probe"), 1u);
  std::string shared = instrument(abi::AccessShared, false);
  EXPECT_EQ(occurrences(kernel_text(shared, "reverse_block"), "// gpubt: memory probe"), 5u);
  EXPECT_EQ(occurrences(kernel_text(shared, "gather"), "// gpubt: memory probe"), 0u);
}

// What each call passes, on hand-written PTX: the address (a 64-bit register plus offset, a
// 32-bit shared register widened, a shared variable), the bytes (vectors count whole), the flags
// with the space, isspacep for a generic access, the predicate; barrier number and count.
TEST(PtxAccessSites, ArgumentsFromTheInstruction) {
  const std::string body =
      "{\n\t.reg .pred %p<3>;\n\t.reg .b32 %r<9>;\n\t.reg .b64 %rd<9>;\n"
      "\tld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd2+16];\n"
      "\t@%p1 st.shared.u32 [%r5], %r1;\n"
      "\tld.shared.u64 %rd3, [tile+8];\n"
      "\tatom.global.add.u32 %r2, [%rd4], 1;\n"
      "\tred.shared.add.u32 [%r6+-4], %r2;\n"
      "\tst.u8 [%rd5], %r3;\n"
      "\tld.param.u64 %rd1, [k_param_0];\n"
      "\tld.const.u32 %r7, [c];\n"
      "\tbar.sync 0;\n"
      "\t@!%p2 barrier.sync %r8, 64;\n"
      "\tbar.red.popc.u32 %r4, 1, %p1;\n"
      "\tbar.warp.sync -1;\n"
      "\tret;\n}";
  auto stmts = ptx::scan_body(body, 0, body.size() - 1);
  ASSERT_TRUE(stmts.ok()) << stmts.error();
  auto mem = ptx::memory_sites(body, *stmts, 0);
  ASSERT_EQ(mem.size(), 6u);
  using V = std::vector<std::string>;
  EXPECT_EQ(mem[0].args,
            (V{"%gpubt_a", "16", std::to_string(abi::FlagRead | abi::FlagGlobal), "0"}));
  EXPECT_NE(mem[0].setup.find("mov.b64 %gpubt_a, %rd2;\n\tadd.s64 %gpubt_a, %gpubt_a, 16;"),
            std::string::npos) << mem[0].setup;
  EXPECT_EQ(mem[1].predicate, "@%p1");
  EXPECT_EQ(mem[1].args[2], std::to_string(abi::FlagWrite | abi::FlagShared));
  EXPECT_NE(mem[1].setup.find("cvt.u64.u32 %gpubt_a, %r5;"), std::string::npos) << mem[1].setup;
  EXPECT_NE(mem[2].setup.find("mov.u64 %gpubt_a, tile;\n\tadd.s64 %gpubt_a, %gpubt_a, 8;"),
            std::string::npos) << mem[2].setup;
  EXPECT_EQ(mem[2].args[1], "8");
  EXPECT_EQ(mem[3].args[2],
            std::to_string(abi::FlagRead | abi::FlagWrite | abi::FlagGlobal)); // an atomic
  EXPECT_NE(mem[4].setup.find("add.s64 %gpubt_a, %gpubt_a, -4;"), std::string::npos);
  EXPECT_EQ(mem[5].args[1], "1");
  EXPECT_EQ(mem[5].args[2], "%gpubt_f"); // generic: the space at run time
  EXPECT_NE(mem[5].setup.find("isspacep.shared"), std::string::npos) << mem[5].setup;
  EXPECT_EQ(ptx::memory_sites(body, *stmts, abi::AccessAtomic).size(), 2u);
  EXPECT_EQ(ptx::memory_sites(body, *stmts, abi::AccessWrite | abi::AccessLocal).size(), 1u);

  auto bars = ptx::barrier_sites(body, *stmts);
  ASSERT_EQ(bars.size(), 3u);
  EXPECT_EQ(bars[0].args, (V{"0", "0", "0"}));
  EXPECT_EQ(bars[1].args, (V{"%r8", "64", "1"})); // barrier.sync without .aligned
  EXPECT_EQ(bars[1].predicate, "@!%p2");
  EXPECT_EQ(bars[2].args, (V{"1", "0", "0"}));
}

TEST(PtxInstrument, PtxIsaOfCudaReleases) {
  EXPECT_EQ(ptx_isa_for_cuda(13000), 90);
  EXPECT_EQ(ptx_isa_for_cuda(12080), 87);
  EXPECT_EQ(ptx_isa_for_cuda(12040), 84);
  EXPECT_EQ(ptx_isa_for_cuda(12000), 80);
  EXPECT_EQ(ptx_isa_for_cuda(13020), 90); // newer than the table: at least what it knows
  EXPECT_EQ(ptx_isa_for_cuda(10020), 0);
}

} // namespace
} // namespace gpubt::runtime
