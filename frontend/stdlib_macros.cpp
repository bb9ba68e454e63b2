// The macros' text. assert's errorf sits at line 6, columns 5-37, where bpftrace's stdlib has
// it: a failed assert reads "stdlib/base.bt:6:5-37: ERROR: assert failed: ..." in both.
#include "frontend/stdlib_macros.h"

namespace gpubt::frontend {

const SourceFile &stdlib_macros() {
  static const SourceFile file("stdlib/base.bt", R"BT(// gpubt's stdlib macros: a script's own macro of the same name replaces one.
// assert(cond, msg): when cond is false, an error of this place with msg, and exit status 1.
macro assert(cond, msg)
{
  if (!cond) {
    errorf("assert failed: %s", msg);
    exit(1);
  }
}

// ppid(task): the pid of a task's parent (curtask or a struct task_struct pointer).
macro ppid(task)
{
  task.real_parent.pid
}
)BT");
  return file;
}

} // namespace gpubt::frontend
