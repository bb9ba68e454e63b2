// struct pthread's tid offset (see pthread_tid.h). glibc has no interface for it; debuggers
// (py-spy, libthread_db's descriptors) know it per libc. Here it is measured: the first 4-byte
// word of pthread_self()'s block equal to gettid(), in the main thread and in a second one (a
// word can equal one tid by chance, hardly both).
#include "runtime/process/pthread_tid.h"

#include <pthread.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <vector>

namespace gpubt::runtime {
namespace {

constexpr uint32_t kSearched = 1024; // struct pthread is larger (about 2300 bytes in glibc 2.36)

std::vector<uint32_t> offsets_of_own_tid() {
  auto *self = reinterpret_cast<const unsigned char *>(pthread_self());
  int32_t tid = int32_t(gettid());
  std::vector<uint32_t> out;
  for (uint32_t at = 0; at + 4 <= kSearched; at += 4) {
    int32_t v;
    memcpy(&v, self + at, 4);
    if (v == tid)
      out.push_back(at);
  }
  return out;
}

std::optional<uint32_t> measure() {
  auto first = offsets_of_own_tid();
  std::vector<uint32_t> second;
  std::thread([&] { second = offsets_of_own_tid(); }).join();
  for (uint32_t at : first)
    for (uint32_t other : second)
      if (at == other)
        return at;
  return std::nullopt;
}

} // namespace

std::optional<uint32_t> pthread_tid_offset() {
  static const std::optional<uint32_t> offset = measure();
  return offset;
}

} // namespace gpubt::runtime
