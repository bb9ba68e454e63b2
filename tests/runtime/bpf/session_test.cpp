// Sessions against the real kernel: uprobes, uretprobes, tracepoints, BEGIN/END, intervals and
// ring buffer events, with -c children.
#include "bpf_asm.h"
#include "runtime/bpf/session.h"
#include "runtime/process/stop_signals.h"
#include "runtime/run/run_loop.h"
#include <bpf/libbpf.h>
#include <chrono>
#include <csignal>
#include <cstring>
#include <gtest/gtest.h>
#include <iostream>
#include <thread>
#include <unistd.h>

using namespace gpubt::runtime;
using gpubt::test::BpfAsm;
namespace test = gpubt::test;
namespace gabi = gpubt::abi; // plain `abi` clashes with cxxabi.h's ::abi

namespace {

const std::string calls = GPUBT_BINARY_DIR "/tests/programs/calls";
const std::string getpids = GPUBT_BINARY_DIR "/tests/programs/getpids";

struct Recorder : EventHandler {
  std::vector<std::string> log;
  void on_event(const gabi::EventHeader &h, const uint8_t *payload, size_t size) override {
    std::string index = std::to_string(h.index);
    switch (static_cast<gabi::EventKind>(h.kind)) {
    case gabi::EventKind::Printf: {
      std::string s = "printf " + index;
      if (size >= 8) {
        uint64_t v;
        memcpy(&v, payload, 8);
        s += " " + std::to_string(v);
      }
      return log.push_back(s);
    }
    case gabi::EventKind::PrintMap:
      return log.push_back("print " + index);
    case gabi::EventKind::ClearMap:
      return log.push_back("clear " + index);
    case gabi::EventKind::ZeroMap:
      return log.push_back("zero " + index);
    case gabi::EventKind::Exit:
      return log.push_back("exit");
    default:
      return;
    }
  }
};

uint64_t sum_u64(const MapData &data) {
  uint64_t total = 0;
  for (auto &e : data)
    for (auto &v : e.values) {
      uint64_t x = 0;
      memcpy(&x, v.data(), std::min<size_t>(8, v.size()));
      total += x;
    }
  return total;
}

// Creates, attaches, runs BEGIN, the loop and END.
std::unique_ptr<Session> run_session(const gabi::ProgramSpec &spec, SessionOptions opts,
                                     Recorder &rec, StopReason expect, int expect_attached) {
  auto s = Session::create(spec, std::move(opts));
  EXPECT_TRUE(s.ok()) << s.error();
  if (!s)
    return nullptr;
  auto n = (*s)->attach();
  EXPECT_TRUE(n.ok()) << n.error();
  if (n)
    EXPECT_EQ(*n, expect_attached);
  (*s)->run_begin();
  EXPECT_EQ(run_loop({s->get(), &rec}), expect);
  (*s)->run_end(rec);
  return std::move(*s);
}

} // namespace

TEST(Session, UprobeCountsExactlyWithChild) {
  gabi::ProgramSpec spec;
  spec.maps = {test::array_map("@add"), test::array_map("@tick", BPF_MAP_TYPE_PERCPU_ARRAY)};
  spec.probes = {
      test::probe(gabi::AttachKind::Uprobe, "uprobe:calls:add", calls, "add",
                  BpfAsm().count_in_array(0).end()),
      test::probe(gabi::AttachKind::Uprobe, "uprobe:calls:tick", calls, "tick",
                  BpfAsm().count_in_array(1).end()),
  };
  Recorder rec;
  auto s = run_session(spec, {.command = calls + " 4"}, rec, StopReason::ChildExited, 2);
  ASSERT_TRUE(s);
  EXPECT_EQ(sum_u64(s->read_map(0)), 40u);
  auto tick = s->read_map(1);
  ASSERT_EQ(tick.size(), 1u);
  EXPECT_EQ(tick[0].values.size(), size_t(libbpf_num_possible_cpus()));
  EXPECT_EQ(sum_u64(tick), 4u);
}

TEST(Session, WildcardUretprobeOneProgramManyFunctions) {
  gabi::ProgramSpec spec;
  spec.maps = {test::array_map("@")};
  spec.probes = {test::probe(gabi::AttachKind::Uretprobe, "uretprobe:calls:[agt]*", calls, "[agt]*",
                             BpfAsm().count_in_array(0).end())};
  Recorder rec;
  // add x30, greet x3, tick x3
  auto s = run_session(spec, {.command = calls}, rec, StopReason::ChildExited, 3);
  ASSERT_TRUE(s);
  EXPECT_EQ(sum_u64(s->read_map(0)), 36u);
}

TEST(Session, UnmatchedUprobeIsSkipped) {
  gabi::ProgramSpec spec;
  spec.maps = {test::array_map("@")};
  spec.probes = {test::probe(gabi::AttachKind::Uprobe, "uprobe:calls:nonexistent", calls,
                             "nonexistent", BpfAsm().count_in_array(0).end()),
                 test::probe(gabi::AttachKind::Uprobe, "uprobe:calls:tick", calls, "tick",
                             BpfAsm().count_in_array(0).end())};
  Recorder rec;
  auto s = run_session(spec, {.command = calls}, rec, StopReason::ChildExited, 1);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->unmatched(), std::vector<std::string>{"uprobe:calls:nonexistent"});
  EXPECT_EQ(sum_u64(s->read_map(0)), 3u);
}

TEST(Session, MissingTargetFails) {
  gabi::ProgramSpec spec;
  spec.maps = {test::array_map("@")};
  spec.probes = {test::probe(gabi::AttachKind::Uprobe, "uprobe:/nonexist/ls:foo", "/nonexist/ls",
                             "foo", BpfAsm().count_in_array(0).end())};
  auto s = Session::create(spec, {});
  ASSERT_TRUE(s.ok()) << s.error();
  auto n = (*s)->attach();
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error(), "uprobe target file '/nonexist/ls' does not exist or is not executable");
}

TEST(Session, RingBufferEventsInOrder) {
  gabi::ProgramSpec spec;
  spec.maps = {test::ringbuf_map()};
  spec.ringbuf_map = 0;
  uint32_t printf_kind = uint32_t(gabi::EventKind::Printf);
  // printf #7 with add's first argument (pt_regs->di).
  spec.probes = {test::probe(gabi::AttachKind::Uprobe, "uprobe:calls:add", calls, "add",
                             BpfAsm()
                                 .ldx_dw(BPF_REG_6, BPF_REG_1, 112 /* x86-64 pt_regs->di */)
                                 .emit_event(0, printf_kind, 7, BPF_REG_6)
                                 .end())};
  Recorder rec;
  auto s = run_session(spec, {.command = calls}, rec, StopReason::ChildExited, 1);
  std::vector<std::string> want;
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < 10; ++i)
      want.push_back("printf 7 " + std::to_string(i));
  EXPECT_EQ(rec.log, want);
}

TEST(Session, BeginEndAndExit) {
  gabi::ProgramSpec spec;
  spec.maps = {test::ringbuf_map(), test::array_map("@begin"), test::array_map("@hits")};
  spec.ringbuf_map = 0;
  auto ev = [](gabi::EventKind k) { return uint32_t(k); };
  spec.probes = {
      test::probe(gabi::AttachKind::Begin, "BEGIN", "", "",
                  BpfAsm()
                      .emit_event(0, ev(gabi::EventKind::Printf), 1)
                      .emit_event(0, ev(gabi::EventKind::PrintMap), 2)
                      .emit_event(0, ev(gabi::EventKind::ZeroMap), 2)
                      .emit_event(0, ev(gabi::EventKind::ClearMap), 2)
                      .emit_event(0, ev(gabi::EventKind::Exit), 0)
                      .emit_event(0, ev(gabi::EventKind::Printf), 99) // after exit(): dropped
                      .count_in_array(1)
                      .end()),
      test::probe(gabi::AttachKind::End, "END", "", "",
                  BpfAsm().emit_event(0, ev(gabi::EventKind::Printf), 3).end()),
  };
  Recorder rec;
  auto start = std::chrono::steady_clock::now();
  auto s = run_session(spec, {}, rec, StopReason::Exit, 2);
  ASSERT_TRUE(s);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(150));
  EXPECT_EQ(rec.log, (std::vector<std::string>{"printf 1", "print 2", "zero 2", "clear 2", "exit",
                                               "printf 3"}));
  EXPECT_EQ(sum_u64(s->read_map(1)), 1u);
}

TEST(Session, TracepointFilteredByChildPidFromGlobals) {
  gabi::ProgramSpec spec;
  spec.maps = {test::array_map("globals", BPF_MAP_TYPE_ARRAY, 16), test::array_map("@")};
  spec.globals_map = 0;
  BpfAsm a;
  a.st_w(BPF_REG_10, -4, 0)
      .mov_reg(BPF_REG_2, BPF_REG_10)
      .add_imm(BPF_REG_2, -4)
      .ld_map(BPF_REG_1, 0)
      .call(BPF_FUNC_map_lookup_elem)
      .jeq_imm_out(BPF_REG_0, 0)
      .ldx_dw(BPF_REG_6, BPF_REG_0, 8 * gabi::GlobalChildPid)
      .call(BPF_FUNC_get_current_pid_tgid)
      .rsh_imm(BPF_REG_0, 32)
      .jne_reg_out(BPF_REG_0, BPF_REG_6)
      .count_in_array(1);
  spec.probes = {test::probe(gabi::AttachKind::Tracepoint, "tracepoint:syscalls:sys_enter_getpid",
                             "syscalls", "sys_enter_getpid", a.end())};
  Recorder rec;
  auto s = run_session(spec, {.command = getpids + " 7"}, rec, StopReason::ChildExited, 1);
  ASSERT_TRUE(s);
  EXPECT_GT(s->child_pid(), 0);
  EXPECT_EQ(sum_u64(s->read_map(1)), 7u);
}

TEST(Session, IntervalFires) {
  gabi::ProgramSpec spec;
  spec.maps = {test::array_map("@")};
  auto p = test::probe(gabi::AttachKind::Interval, "interval:ms:5", "", "",
                       BpfAsm().count_in_array(0).end());
  p.interval_ns = 5'000'000;
  spec.probes = {p};
  Recorder rec;
  auto s = run_session(spec, {.command = "sleep 0.2"}, rec, StopReason::ChildExited, 1);
  ASSERT_TRUE(s);
  uint64_t n = sum_u64(s->read_map(0));
  EXPECT_GE(n, 10u);
  EXPECT_LE(n, 60u);
}

TEST(Session, PidMustExist) {
  gabi::ProgramSpec spec;
  auto s = Session::create(spec, {.pid = 999999999});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "failed to open process 999999999: No such process");
}

TEST(Session, ManyUprobesAttachQuickly) {
  gabi::ProgramSpec spec;
  spec.maps = {test::array_map("@")};
  spec.probes = {test::probe(gabi::AttachKind::Uprobe, "uprobe:libc:*", "libc", "*",
                             BpfAsm().count_in_array(0).end())};
  auto start = std::chrono::steady_clock::now();
  auto s = Session::create(spec, {.command = calls});
  ASSERT_TRUE(s.ok()) << s.error();
  auto n = (*s)->attach();
  ASSERT_TRUE(n.ok()) << n.error();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start)
                .count();
  EXPECT_GT(*n, 1000);
  EXPECT_LT(ms, 5000) << *n << " probes";
  std::cerr << "attached " << *n << " libc uprobes in " << ms << " ms, skipped "
            << (*s)->skipped().size() << "\n";
  for (auto &why : (*s)->skipped())
    std::cerr << "  " << why << "\n";
  Recorder rec;
  EXPECT_EQ(run_loop({s->get(), &rec}), StopReason::ChildExited);
  EXPECT_GT(sum_u64((*s)->read_map(0)), 10u);
}

TEST(Session, SigintStopsTheLoop) {
  gabi::ProgramSpec spec;
  spec.maps = {test::ringbuf_map()};
  spec.ringbuf_map = 0;
  auto s = Session::create(spec, {});
  ASSERT_TRUE(s.ok()) << s.error();
  std::thread t([] {
    sigset_t set; // deliver to the looping thread, as a terminal's ^C would
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    kill(getpid(), SIGINT);
  });
  Recorder rec;
  auto start = std::chrono::steady_clock::now();
  StopSignals signals(true, false); // as the tracer installs them
  EXPECT_EQ(run_loop({s->get(), &rec}), StopReason::Signal);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(150));
  t.join();
}

TEST(Session, SleepableUprobe) {
  gabi::ProgramSpec spec;
  spec.maps = {test::array_map("@")};
  auto p = test::probe(gabi::AttachKind::Uprobe, "uprobe:calls:add", calls, "add",
                       BpfAsm().count_in_array(0).end());
  p.sleepable = true;
  spec.probes = {p};
  Recorder rec;
  auto s = run_session(spec, {.command = calls}, rec, StopReason::ChildExited, 1);
  ASSERT_TRUE(s);
  EXPECT_EQ(sum_u64(s->read_map(0)), 30u);
}
