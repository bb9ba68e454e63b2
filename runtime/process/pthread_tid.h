// Where glibc's struct pthread (what a pthread_t points to) keeps the thread's kernel tid: CPython
// 3.10 names a thread state's thread only by its pthread_t, and pystack matches the probed thread
// by tid.
#pragma once
#include <cstdint>
#include <optional>

namespace gpubt::runtime {

// The tid's byte offset in struct pthread of this process's libc (found by looking for the
// tid in pthread_self()'s block, in two threads), or none where it cannot be found.
std::optional<uint32_t> pthread_tid_offset();

} // namespace gpubt::runtime
