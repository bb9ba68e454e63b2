// perf_event_open wrappers for the events BPF programs hang off: uprobes (through the uprobe
// PMU, no tracefs needed), tracepoints and CPU-clock intervals.
#pragma once
#include "runtime/abi/result.h"
#include "runtime/abi/unique_fd.h"
#include <cstdint>
#include <string>

namespace gpubt::runtime {

// A uprobe (or uretprobe) at file OFFSET of PATH; PID > 0 limits it to that process.
// REF_CTR_OFFSET: the file offset of a USDT semaphore the kernel increments while attached.
Result<UniqueFd> open_uprobe_event(const std::string &path, uint64_t offset, bool retprobe,
                                   int pid, uint64_t ref_ctr_offset = 0);

// A kprobe (or kretprobe) on kernel function FUNC, every process (the kprobe PMU).
Result<UniqueFd> open_kprobe_event(const std::string &func, bool retprobe);

// Tracepoint with perf id TP_ID, every process.
Result<UniqueFd> open_tracepoint_event(int tp_id);

// Fires every PERIOD events of perf TYPE/CONFIG on CPU, every process (software: and
// hardware: probes open one per CPU). WHAT names the event in the error.
Result<UniqueFd> open_cpu_event(uint32_t type, uint64_t config, uint64_t period, int cpu,
                                const std::string &what);

// A hardware breakpoint (watchpoint) on LENGTH bytes at ADDRESS, MODE of "r", "w", "x": in
// process PID (> 0), or on CPU for every process. Out of debug registers is ENOSPC.
Result<UniqueFd> open_breakpoint_event(uint64_t address, uint32_t length, const std::string &mode,
                                       int pid, int cpu);

// Fires every PERIOD_NS of CPU time on CPU (bpftrace's profile opens one per CPU).
Result<UniqueFd> open_profile_event(uint64_t period_ns, int cpu);

// Fires every PERIOD_NS of CPU time on CPU 0 (bpftrace's interval).
Result<UniqueFd> open_interval_event(uint64_t period_ns);

// PERF_EVENT_IOC_SET_BPF then ENABLE.
Status attach_bpf_to_event(int event_fd, int prog_fd);

// The same through a BPF link that gives the program COOKIE (bpf_get_attach_cookie); the link
// must be kept open as long as the event.
Result<UniqueFd> attach_bpf_to_event(int event_fd, int prog_fd, uint64_t cookie);

} // namespace gpubt::runtime
