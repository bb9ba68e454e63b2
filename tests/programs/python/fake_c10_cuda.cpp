// Stands in for PyTorch's libc10_cuda.so (the CUDA caching allocator) in pymemleak's and
// pyallocchurn's tests: the same class, namespaces and signatures as c10/cuda/
// CUDACachingAllocator.cpp (PyTorch 2.x), so the compiler gives its entry points the symbols a
// real libc10_cuda.so has: NativeCachingAllocator::allocate(size_t) returning a DataPtr in memory
// (a unique_ptr inside makes it non-trivial), and the DataPtr's deleter local_raw_delete(void *),
// static in recent PyTorch (an L in its mangled name). Memory comes from a counter, not a GPU.
// fake_torch_empty/fake_torch_free make and drop a DataPtr from Python (ctypes), as a tensor's
// storage does.
#include <cstddef>
#include <cstdint>
#include <memory>

namespace c10 {
struct Device {
  int8_t type, index;
};
namespace detail {
struct UniqueVoidPtr {
  void *data_;
  std::unique_ptr<void, void (*)(void *)> ctx_;
};
} // namespace detail
struct DataPtr {
  detail::UniqueVoidPtr ptr_;
  Device device_;
};
struct Allocator {
  virtual ~Allocator() = default;
  virtual DataPtr allocate(size_t n) = 0;
};

namespace cuda::CUDACachingAllocator {
struct CUDAAllocator : Allocator {};

namespace Native {
static void local_raw_delete(void *ptr);

class NativeCachingAllocator : public CUDAAllocator {
public:
  DataPtr allocate(size_t size) override;
  void free(void *ptr) { freed_ += ptr != nullptr; }

private:
  uintptr_t next_ = 0x7d0000000000;
  size_t freed_ = 0;
};

__attribute__((noinline)) DataPtr NativeCachingAllocator::allocate(size_t size) {
  void *p = reinterpret_cast<void *>(next_);
  next_ += (size + 511) & ~uintptr_t(511); // the caching allocator's 512-byte rounding
  return {{p, {p, &local_raw_delete}}, {1, 0}};
}

static NativeCachingAllocator allocator;

__attribute__((noinline)) static void local_raw_delete(void *ptr) { allocator.free(ptr); }
} // namespace Native
} // namespace cuda::CUDACachingAllocator
} // namespace c10

extern "C" {
// A tensor's storage of SIZE bytes; its handle for fake_torch_free.
void *fake_torch_empty(size_t size) {
  c10::Allocator *a = &c10::cuda::CUDACachingAllocator::Native::allocator;
  return new c10::DataPtr(a->allocate(size));
}
void fake_torch_free(void *storage) { delete static_cast<c10::DataPtr *>(storage); }
}
