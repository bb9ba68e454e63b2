/* The slice of nccl.h (NCCL 2.x; RCCL declares the same) that nccl_calls.c and the fake
 * libnccl use, so neither needs NCCL's headers to build. Values as nccl.h defines them. */
#pragma once
#include <stddef.h>

typedef enum { ncclSuccess = 0, ncclUnhandledCudaError = 1, ncclInvalidArgument = 4 } ncclResult_t;
typedef enum { ncclInt8 = 0, ncclFloat32 = 7, ncclFloat64 = 8, ncclBfloat16 = 9 } ncclDataType_t;
typedef enum { ncclSum = 0, ncclAvg = 4 } ncclRedOp_t;
typedef struct { char internal[128]; } ncclUniqueId;
typedef struct ncclComm *ncclComm_t;
typedef void *cudaStream_t;
