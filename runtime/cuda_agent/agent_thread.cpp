#include "runtime/cuda_agent/agent_thread.h"

#include <string>

#include <cuda.h>
#include <pthread.h>

#include "runtime/abi/agent_protocol.h"
#include "runtime/cuda_agent/driver_api.h"

namespace gpubt::agent {

void become_agent_thread(const char *role) {
  pthread_setname_np(pthread_self(), (std::string(abi::kAgentThreadPrefix) + role).c_str());
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  if (auto exchange = GPUBT_DRIVER(cuThreadExchangeStreamCaptureMode))
    exchange(&mode);
}

} // namespace gpubt::agent
