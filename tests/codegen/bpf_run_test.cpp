// Compiled scripts run for real through the runtime's Session: event payloads and map values
// must be what bpftrace would compute.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

#include <unistd.h>

#include "runtime/process/elf_symbols.h"
#include "runtime/abi/hang_ctx.h"
#include "runtime/bpf/session.h"
#include "runtime/run/run_loop.h"
#include "tests/codegen/bpf_test_support.h"

namespace gpubt::codegen::bpf::testing {
namespace {

struct Capture : runtime::EventHandler {
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> printfs;
  int exits = 0;
  void on_event(const abi::EventHeader &h, const uint8_t *payload, size_t size) override {
    if (h.kind == uint32_t(abi::EventKind::Printf))
      printfs.push_back({h.index, std::vector<uint8_t>(payload, payload + size)});
    else if (h.kind == uint32_t(abi::EventKind::Exit))
      ++exits;
  }
};

int64_t arg_int(const abi::ProgramSpec &spec, const std::pair<uint32_t, std::vector<uint8_t>> &ev,
                size_t i) {
  const auto &a = spec.formats.at(ev.first).args.at(i);
  int64_t v = 0;
  std::memcpy(&v, ev.second.data() + a.offset, a.type.size);
  if (a.type.kind == abi::ValueType::Int && a.type.size < 8) // sign-extend
    v = (v << (64 - 8 * a.type.size)) >> (64 - 8 * a.type.size);
  return v;
}

std::string arg_str(const abi::ProgramSpec &spec,
                    const std::pair<uint32_t, std::vector<uint8_t>> &ev, size_t i) {
  const auto &a = spec.formats.at(ev.first).args.at(i);
  return std::string(reinterpret_cast<const char *>(ev.second.data() + a.offset),
                     strnlen(reinterpret_cast<const char *>(ev.second.data() + a.offset),
                             a.type.size));
}

int map_index(const abi::ProgramSpec &spec, const std::string &name) {
  for (size_t i = 0; i < spec.maps.size(); ++i)
    if (spec.maps[i].name == name)
      return i;
  return -1;
}

// Per-CPU word 0 summed over CPUs, per key bytes.
std::map<std::vector<uint8_t>, int64_t> summed(const runtime::MapData &data, size_t word = 0) {
  std::map<std::vector<uint8_t>, int64_t> out;
  for (const auto &e : data)
    for (const auto &v : e.values) {
      int64_t x = 0;
      std::memcpy(&x, v.data() + 8 * word, std::min<size_t>(8, v.size() - 8 * word));
      out[e.key] += x;
    }
  return out;
}

std::vector<uint8_t> u64_key(uint64_t k) {
  std::vector<uint8_t> b(8);
  std::memcpy(b.data(), &k, 8);
  return b;
}

TEST(BpfRun, BeginPrintfValues) {
  Compiled c = compile_script(R"(BEGIN { $a = -7; $s = "abc";
    printf("%d %d %s %d %d %s\n", 1 + 2 * 3, $a / 2, $s, (int8)300, 7 / 0,
           $s == "abc" ? "eq" : "ne");
    @x = 5; @x += 3; @x++; printf("%d %d\n", @x, @missing[1]); exit(); printf("never\n"); }
    END { @missing[2] = 1; })");
  ASSERT_EQ(c.error, "");
  auto s = runtime::Session::create(c.art.spec, {});
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_TRUE((*s)->attach().ok());
  Capture cap;
  (*s)->run_begin();
  runtime::run_loop({s->get(), &cap});
  const auto &spec = c.art.spec;
  ASSERT_EQ(cap.printfs.size(), 2u);
  EXPECT_EQ(cap.exits, 1);
  const auto &e = cap.printfs[0];
  EXPECT_EQ(arg_int(spec, e, 0), 7);
  EXPECT_EQ(uint64_t(arg_int(spec, e, 1)), uint64_t(-7) / 2); // bpftrace divides unsigned
  EXPECT_EQ(arg_str(spec, e, 2), "abc");
  EXPECT_EQ(arg_int(spec, e, 3), 44);
  EXPECT_EQ(arg_int(spec, e, 4), 0);
  EXPECT_EQ(arg_str(spec, e, 5), "eq");
  EXPECT_EQ(arg_int(spec, cap.printfs[1], 0), 9);
  EXPECT_EQ(arg_int(spec, cap.printfs[1], 1), 0);
}

// debugf() writes into the kernel's trace buffer, its format read from the probe's memory and
// %s from a string's address. A token of this run's own tells its line from older ones.
TEST(BpfRun, DebugfWritesTheTraceBuffer) {
  const char *trace = "/sys/kernel/tracing/trace";
  if (!std::ifstream(trace))
    GTEST_SKIP() << "no " << trace;
  std::string token = "gpubt-debugf-" + std::to_string(getpid()) + "-" +
                      std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  Compiled c = compile_script("BEGIN { $s = \"str\"; debugf(\"" + token +
                              " %s %d %x\", $s, -1, 16); }");
  ASSERT_EQ(c.error, "");
  auto s = runtime::Session::create(c.art.spec, {});
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_TRUE((*s)->attach().ok());
  (*s)->run_begin();
  std::ifstream in(trace);
  std::string line, found;
  while (std::getline(in, line))
    if (line.find(token) != std::string::npos)
      found = line;
  EXPECT_NE(found.find("bpf_trace_printk: " + token + " str -1 10"), std::string::npos)
      << "trace line: " << found;
}

// gpu:hang (issue 26): run by the session with the launch's context; every builtin reads it,
// the kernel's name from gpubt's own memory.
TEST(BpfRun, GpuHangReadsItsLaunch) {
  Compiled c = compile_script(R"(gpu:hang:spin* {
    printf("%d %s %d %d %d %d %d %d %d %d %d %d %d %d %d\n", pid, kernel, launch_start, gdim_x,
           gdim_y, gdim_z, bdim_x, bdim_y, bdim_z, args.stream, args.device, args.seq,
           args.queued, args.exact, nsecs > 0);
    @[kernel, probe] = count(); })");
  ASSERT_EQ(c.error, "");
  const auto &spec = c.art.spec;
  ASSERT_EQ(spec.probes.size(), 1u);
  EXPECT_EQ(spec.probes[0].kind, abi::AttachKind::Hang);
  EXPECT_EQ(spec.probes[0].func, "spin*");
  EXPECT_EQ(spec.probes[0].interval_ns, 2000000000u);
  auto s = runtime::Session::create(spec, {});
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_TRUE((*s)->attach().ok());
  std::string name = "spin_forever";
  abi::HangCtx ctx;
  ctx.kernel = reinterpret_cast<uint64_t>(name.c_str());
  ctx.since_ns = 123456789, ctx.stream = 0xabc, ctx.seq = 42, ctx.pid = 4321, ctx.device = 3;
  ctx.grid[0] = 7, ctx.grid[1] = 8, ctx.grid[2] = 9, ctx.block[0] = 32, ctx.block[1] = 2;
  ctx.block[2] = 1, ctx.queued = 5, ctx.exact = 1;
  ASSERT_TRUE((*s)->run_probe(0, &ctx, sizeof ctx).ok());
  ctx.exact = 0;
  ASSERT_TRUE((*s)->run_probe(0, &ctx, sizeof ctx).ok());
  Capture cap;
  (*s)->run_end(cap);
  ASSERT_EQ(cap.printfs.size(), 2u);
  const auto &e = cap.printfs[0];
  const int64_t want[] = {4321, 0, 123456789, 7, 8, 9, 32, 2, 1, 0xabc, 3, 42, 5, 1, 1};
  for (size_t i = 0; i < std::size(want); ++i)
    if (i != 1)
      EXPECT_EQ(arg_int(spec, e, i), want[i]) << "argument " << i;
  EXPECT_EQ(arg_str(spec, e, 1), "spin_forever");
  EXPECT_EQ(arg_int(spec, cap.printfs[1], 13), 0);
}

TEST(BpfRun, UprobeAggregationsOnCallsProgram) {
  std::string calls = std::string(GPUBT_BINARY_DIR) + "/tests/programs/calls";
  std::string script = "uprobe:" + calls + ":add { @c = count(); @s = sum(arg0); @mx = max(arg0);"
                       " @mn = min(arg0); @a = avg(arg1); @h = hist(arg0);"
                       " @l = lhist(arg0, 0, 10, 5); @k[arg1] = count(); }"
                       "uprobe:" + calls + ":greet { @names[str(arg0)] = count(); }"
                       "uretprobe:" + calls + ":neg { @neg[retval] = count(); }";
  Compiled c = compile_script(script, true);
  ASSERT_EQ(c.error, "");
  runtime::SessionOptions so;
  so.command = calls + " 3";
  auto s = runtime::Session::create(c.art.spec, so);
  ASSERT_TRUE(s.ok()) << s.error();
  auto n = (*s)->attach();
  ASSERT_TRUE(n.ok()) << n.error();
  Capture cap;
  (*s)->run_begin();
  runtime::run_loop({s->get(), &cap});
  const auto &spec = c.art.spec;
  auto read = [&](const char *name) { return (*s)->read_map(map_index(spec, name)); };
  auto k0 = u64_key(0);
  EXPECT_EQ(summed(read("@c"))[k0], 30);
  EXPECT_EQ(summed(read("@s"))[k0], 135);
  auto mx = read("@mx");
  int64_t best = INT64_MIN;
  for (const auto &e : mx)
    for (const auto &v : e.values) {
      abi::MinMaxValue m;
      std::memcpy(&m, v.data(), sizeof m);
      if (m.is_set)
        best = std::max(best, m.value);
    }
  EXPECT_EQ(best, 9);
  EXPECT_EQ(summed(read("@a"), 0)[k0], 30);     // sum of arg1: 10 * (0 + 1 + 2)
  EXPECT_EQ(summed(read("@a"), 1)[k0], 30);     // count
  auto h = summed(read("@h"));
  EXPECT_EQ(h[u64_key(1)], 3);  // 0
  EXPECT_EQ(h[u64_key(2)], 3);  // 1
  EXPECT_EQ(h[u64_key(3)], 6);  // 2..3
  EXPECT_EQ(h[u64_key(4)], 12); // 4..7
  EXPECT_EQ(h[u64_key(5)], 6);  // 8..9
  auto l = summed(read("@l"));
  EXPECT_EQ(l[u64_key(1)], 15);
  EXPECT_EQ(l[u64_key(2)], 15);
  EXPECT_EQ(l.count(u64_key(0)), 0u);
  auto k = summed(read("@k"));
  EXPECT_EQ(k[u64_key(0)], 10);
  EXPECT_EQ(k[u64_key(2)], 10);
  auto names = summed(read("@names"));
  std::map<std::string, int64_t> by_name;
  for (const auto &[key, v] : names)
    by_name[std::string(reinterpret_cast<const char *>(key.data()))] += v;
  EXPECT_EQ(by_name["alice"], 1);
  EXPECT_EQ(by_name["bob"], 1);
  EXPECT_EQ(by_name["carol"], 1);
  auto neg = summed(read("@neg"));
  EXPECT_EQ(neg[u64_key(uint64_t(-1000))], 1);
  EXPECT_EQ(neg[u64_key(uint64_t(-2000))], 1);
}

TEST(BpfRun, BuiltinsFuncCpidElapsedComm) {
  std::string calls = std::string(GPUBT_BINARY_DIR) + "/tests/programs/calls";
  Compiled c = compile_script("uprobe:" + calls + ":tick { @f[func] = count(); @cp = cpid;"
                              " @e = elapsed; @p[probe] = count(); @t[pid, tid] = 1;"
                              " printf(\"%s %d %d\\n\", comm, pid, (int32)arg0 - 5); }",
                              true);
  ASSERT_EQ(c.error, "");
  runtime::SessionOptions so;
  so.command = calls + " 2";
  auto s = runtime::Session::create(c.art.spec, so);
  ASSERT_TRUE(s.ok()) << s.error();
  ASSERT_TRUE((*s)->attach().ok());
  Capture cap;
  (*s)->run_begin();
  int child = (*s)->child_pid();
  runtime::run_loop({s->get(), &cap});
  const auto &spec = c.art.spec;
  ASSERT_EQ(cap.printfs.size(), 2u);
  EXPECT_EQ(arg_str(spec, cap.printfs[0], 0), "calls");
  EXPECT_EQ(arg_int(spec, cap.printfs[0], 1), child);
  EXPECT_EQ(arg_int(spec, cap.printfs[1], 2), -4);
  auto f = (*s)->read_map(map_index(spec, "@f"));
  ASSERT_EQ(f.size(), 1u);
  uint64_t cookie;
  std::memcpy(&cookie, f[0].key.data(), 8);
  // The attach cookie naming the function, which the session prints even after the child exited.
  EXPECT_TRUE(cookie & abi::kFuncCookieTag);
  EXPECT_EQ((*s)->symbolizer()(cookie), "tick");
  auto cp = (*s)->read_map(map_index(spec, "@cp"));
  ASSERT_EQ(cp.size(), 1u);
  int64_t v;
  std::memcpy(&v, cp[0].values[0].data(), 8);
  EXPECT_EQ(v, child);
  auto e = (*s)->read_map(map_index(spec, "@e"));
  ASSERT_EQ(e.size(), 1u);
  std::memcpy(&v, e[0].values[0].data(), 8);
  EXPECT_GT(v, 0);
  EXPECT_LT(v, 60'000'000'000);
  auto p = summed((*s)->read_map(map_index(spec, "@p")));
  EXPECT_EQ(p[u64_key(0)], 2);
  auto t = (*s)->read_map(map_index(spec, "@t"));
  ASSERT_EQ(t.size(), 1u);
  ASSERT_EQ(t[0].key.size(), 16u);
  std::memcpy(&v, t[0].key.data(), 8);
  EXPECT_EQ(v, child);
}

// str() of a string in a page the process has never touched: bpftrace 0.17 reads "" (the
// non-faulting read fails); the sleepable fault-in reads it.
std::string str_of_untouched_page(bool fault_in) {
  std::string tmpl = ::testing::TempDir() + "/gpubt_fault_XXXXXX";
  if (!mkdtemp(tmpl.data()))
    return "<no cc>";
  std::string dir = tmpl;
  std::ofstream(dir + "/fault.c") << R"(#include <fcntl.h>
#include <sys/mman.h>
__attribute__((noinline)) int greet(const char *s) { __asm__ volatile("" ::"r"(s) : "memory"); return 0; }
int main(int argc, char **argv) {
  const char *p = mmap(0, 4096, PROT_READ, MAP_PRIVATE, open(argv[1], O_RDONLY), 0);
  return greet(p);
})";
  std::ofstream(dir + "/fault.txt") << std::string("hello") << '\0';
  if (std::system(("cc -O1 -o " + dir + "/fault " + dir + "/fault.c 2>/dev/null").c_str()) != 0)
    return "<no cc>";
  BpfCodegenOptions opts;
  opts.fault_in_strings = fault_in;
  Compiled c = compile_script("uprobe:" + dir + "/fault:greet { @s[str(arg0)] = count(); }",
                              true, opts);
  EXPECT_EQ(c.error, "");
  EXPECT_EQ(c.art.spec.probes.at(0).sleepable, fault_in);
  runtime::SessionOptions so;
  so.command = dir + "/fault " + dir + "/fault.txt";
  auto s = runtime::Session::create(c.art.spec, so);
  if (!s.ok())
    return "<session: " + s.error() + ">";
  if (auto n = (*s)->attach(); !n.ok())
    return "<attach: " + n.error() + ">";
  Capture cap;
  (*s)->run_begin();
  runtime::run_loop({s->get(), &cap});
  std::string out;
  for (const auto &e : (*s)->read_map(map_index(c.art.spec, "@s")))
    out += std::string(reinterpret_cast<const char *>(e.key.data())) + ";";
  return out;
}

TEST(BpfRun, StrFaultsInUntouchedPages) {
  std::string got = str_of_untouched_page(true);
  if (got == "<no cc>")
    GTEST_SKIP() << "no C compiler";
  EXPECT_EQ(got, "hello;");
  // Without the fault-in, bpftrace's behaviour: an empty string.
  EXPECT_EQ(str_of_untouched_page(false), ";");
}

} // namespace
} // namespace gpubt::codegen::bpf::testing
