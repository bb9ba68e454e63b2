// A task's comm from /proc (see task_name.h).
#include "runtime/process/task_name.h"

#include <fstream>

namespace gpubt::runtime {

std::string task_name(int pid, int tid) {
  std::string path = "/proc/" + std::to_string(pid);
  if (tid >= 0)
    path += "/task/" + std::to_string(tid);
  std::string name;
  std::getline(std::ifstream(path + "/comm"), name);
  return name;
}

} // namespace gpubt::runtime
