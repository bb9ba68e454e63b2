// The kernel's name of a process or thread (its comm, as `ps` and bpftrace's comm show it).
#pragma once
#include <string>

namespace gpubt::runtime {

// /proc/PID/comm, or /proc/PID/task/TID/comm with TID; "" once the task is gone.
std::string task_name(int pid, int tid = -1);

} // namespace gpubt::runtime
