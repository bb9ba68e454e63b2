// Launch-level gpu probes, host side (issue 25): the agents' FinishedLaunches records
// (finished_launches.h) taken out of their record stream, and each finished launch handed to every
// launch-level probe (AttachKind::LaunchEnd) whose kernel pattern matches, once, with its context
// (launch_ctx.h), for the session to run; and --timeline's GPU spans, one per launch.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/abi/finished_launches.h"
#include "runtime/abi/launch_ctx.h"
#include "runtime/abi/program_spec.h"
#include "runtime/abi/result.h"

namespace gpubt::runtime {

class LaunchProbes {
public:
  explicit LaunchProbes(const abi::ProgramSpec &spec); // its AttachKind::LaunchEnd probes
  bool has_probes() const { return !probes_.empty(); }

  // PROBE (an index into spec.probes) runs for the launch CTX describes.
  using Fire = std::function<void(size_t probe, const abi::LaunchCtx &ctx)>;
  // Each launch taken, whether a probe matched it or not (--timeline's spans).
  using Each = std::function<void(uint32_t pid, const abi::FinishedLaunch &l)>;
  // Takes the FinishedLaunches records among the whole records at the front of RECORDS out of it
  // (the others stay, in order) and fires, launch by launch in the agents' order, every probe
  // whose kernel pattern matches. Error: a record that does not parse (the others are taken).
  Status take_from(std::vector<uint8_t> &records, const Fire &fire, const Each &each = {});
  bool any_record() const { return any_record_; }
  uint64_t lost() const { return lost_; } // launches the agents timed but could not send

private:
  struct Probe {
    size_t index;
    std::string pattern;
  };
  std::vector<Probe> probes_;
  bool any_record_ = false;
  uint64_t lost_ = 0;
};

} // namespace gpubt::runtime
