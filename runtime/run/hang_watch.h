// gpu:hang probes, host side (issue 26): the agents' RunningLaunches records (running_launches.h)
// taken out of their record stream, and each running launch whose age reached a gpu:hang probe's
// duration handed out once per probe, with its context (hang_ctx.h), for the session to run.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/abi/hang_ctx.h"
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"
#include "runtime/abi/running_launches.h"
#include "runtime/output/output.h"

namespace gpubt::runtime {

class HangWatch {
public:
  explicit HangWatch(const abi::ProgramSpec &spec); // its AttachKind::Hang probes
  bool has_probes() const { return !probes_.empty(); }

  // PROBE (an index into spec.probes) is due for the launch CTX describes.
  using Fire = std::function<void(size_t probe, const abi::HangCtx &ctx)>;
  // Takes the RunningLaunches records among the whole records at the front of RECORDS out of it
  // (the others stay, in order) and, record by record, fires every probe whose kernel pattern
  // matches a launch that had run its duration when the agent looked (sent_ns - since_ns),
  // once per (probe, stream, launch) while the process lists it. Error: a record that does not
  // parse (the others are still taken).
  Status take_from(std::vector<uint8_t> &records, const Fire &fire);

  // Where the probes read gpu maps the agents copy while the program runs (tools/gpustuck.bt's
  // blocks): a probe due at an agent's look waits for that process's maps copied after the
  // look, at most WAIT_NS. A copy begun earlier can predate what the launch did by then (the
  // records of one poll may carry a look and a copy older than it; gpubt -p, H200).
  void wait_for_maps(uint64_t wait_ns) { map_wait_ns_ = wait_ns; }
  // When the copy of PID's gpu maps the probes would read now began (0: unknown).
  using CopiedAt = std::function<uint64_t(uint32_t pid)>;
  // Fires the waiting probes whose maps have come, or whose wait ended by NOW_NS
  // (CLOCK_MONOTONIC); ALL: every waiting one (the run ends).
  void fire_waiting(const Fire &fire, const CopiedAt &copied_at, uint64_t now_ns, bool all);
  // Forgets the processes that have ended (their last record says nothing about now).
  void forget_ended();
  // Per process that runs a launch, its oldest, aged at NOW_NS (CLOCK_MONOTONIC): --metrics.
  std::vector<RunningKernel> oldest(uint64_t now_ns) const;
  bool any_record() const { return any_record_; }

private:
  void check(const abi::RunningLaunches &r, const Fire &fire);

  struct Probe {
    size_t index;
    std::string pattern;
    uint64_t after_ns;
  };
  std::vector<Probe> probes_;
  struct Waiting {
    size_t probe;
    abi::HangCtx ctx; // its kernel pointed at NAME when it fires
    std::string name;
    uint64_t look_ns;
  };
  uint64_t map_wait_ns_ = 0;
  std::vector<Waiting> waiting_;
  abi::RunningTable table_;
  // pid -> (probe, stream, seq) fired for launches still running
  std::map<uint32_t, std::set<std::tuple<size_t, uint64_t, uint64_t>>> fired_;
  bool any_record_ = false;
};

} // namespace gpubt::runtime
