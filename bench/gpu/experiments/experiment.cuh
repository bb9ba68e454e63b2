// What the issue-25/26 experiments share: a CHECK that ends the program on a CUDA or CUPTI error,
// and CUPTI's buffer request (4 MiB buffers of activity records, freed by each completion callback).
#pragma once
#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    auto r_ = (x);                                                                                 \
    if (r_ != 0) {                                                                                 \
      std::printf("FAILED %s: %d\n", #x, int(r_));                                                 \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

#ifdef CUPTIAPI
inline void CUPTIAPI cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *size = 4 << 20;
  *buffer = static_cast<uint8_t *>(std::aligned_alloc(8, *size));
  *max_records = 0;
}
#endif
