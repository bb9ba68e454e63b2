// NCCL's host API through dlopen(), as PyTorch loads its own libnccl.so.2:
//   nccl_calls LIB             one rank's calls that fail without a GPU (the real library):
//                              ncclGetVersion, ncclGetUniqueId, ncclCommInitRank (2 ranks, rank 1),
//                              then in a group ncclAllReduce, ncclBroadcast and ncclSend on a null
//                              communicator, ncclGroupEnd, and one ncclAllReduce outside a group.
//   nccl_calls LIB RANKS ITERS [LATE]   RANKS ranks of one ncclUniqueId, one thread each (as a
//                              process driving several GPUs does; threads one after another, so
//                              the calls come in a fixed order), each ncclCommInitRank, one
//                              ncclBroadcast, then ITERS ncclAllReduce of (i + 1) * 1024 floats; rank
//                              LATE stops one all-reduce short, as a rank that never reaches a
//                              collective (needs a library whose calls work: the fake one).
#include "nccl/nccl_api.h"
#include <dlfcn.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>

static void *lib;

static void *fn(const char *name) {
  void *f = dlsym(lib, name);
  if (!f) {
    fprintf(stderr, "nccl_calls: %s\n", dlerror());
    exit(1);
  }
  return f;
}

#define CALL(name, type) ((type)fn(#name))
typedef ncclResult_t (*coll_fn)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                ncclComm_t, cudaStream_t);
typedef ncclResult_t (*bcast_fn)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t,
                                 cudaStream_t);
typedef ncclResult_t (*send_fn)(const void *, size_t, ncclDataType_t, int, ncclComm_t,
                                cudaStream_t);
typedef ncclResult_t (*init_fn)(ncclComm_t *, int, ncclUniqueId, int);
typedef ncclResult_t (*void_fn)(void);

static void *const send_buf = (void *)0x1000, *const recv_buf = (void *)0x2000;

static int one_rank_failing(void) {
  int version = 0;
  ncclResult_t r = CALL(ncclGetVersion, ncclResult_t(*)(int *))(&version);
  printf("ncclGetVersion: %d (%d)\n", r, version);
  ncclUniqueId id;
  r = CALL(ncclGetUniqueId, ncclResult_t(*)(ncclUniqueId *))(&id);
  printf("ncclGetUniqueId: %d\n", r);
  ncclComm_t comm = NULL;
  printf("ncclCommInitRank: %d\n", CALL(ncclCommInitRank, init_fn)(&comm, 2, id, 1));
  CALL(ncclGroupStart, void_fn)();
  CALL(ncclAllReduce, coll_fn)(send_buf, recv_buf, 1024, ncclFloat32, ncclSum, NULL, NULL);
  CALL(ncclBroadcast, bcast_fn)(send_buf, recv_buf, 256, ncclInt8, 0, NULL, NULL);
  CALL(ncclSend, send_fn)(send_buf, 64, ncclFloat64, 1, NULL, NULL);
  printf("ncclGroupEnd: %d\n", CALL(ncclGroupEnd, void_fn)());
  r = CALL(ncclAllReduce, coll_fn)(send_buf, recv_buf, 4096, ncclBfloat16, ncclAvg, NULL, NULL);
  printf("ncclAllReduce: %d\n", r);
  return 0;
}

struct rank_args {
  ncclUniqueId id;
  int rank, ranks, iters, late;
};

static void *rank_main(void *p) {
  const struct rank_args *a = p;
  int rank = a->rank, iters = a->iters, late = a->late;
  ncclComm_t comm = NULL;
  if (CALL(ncclCommInitRank, init_fn)(&comm, a->ranks, a->id, rank) != ncclSuccess)
    return (void *)1;
  CALL(ncclBroadcast, bcast_fn)(send_buf, recv_buf, 256, ncclInt8, 0, comm, NULL);
  int n = rank == late ? iters - 1 : iters;
  for (int i = 0; i < n; ++i)
    CALL(ncclAllReduce, coll_fn)(send_buf, recv_buf, (size_t)(i + 1) * 1024, ncclFloat32, ncclSum,
                                 comm, NULL);
  CALL(ncclCommDestroy, ncclResult_t(*)(ncclComm_t))(comm);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2 && argc < 4) {
    fprintf(stderr, "usage: nccl_calls LIB [RANKS ITERS [LATE]]\n");
    return 2;
  }
  lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "nccl_calls: %s\n", dlerror());
    return 1;
  }
  if (argc == 2)
    return one_rank_failing();
  int ranks = atoi(argv[2]), iters = atoi(argv[3]), late = argc > 4 ? atoi(argv[4]) : -1;
  struct rank_args a = {.ranks = ranks, .iters = iters, .late = late};
  CALL(ncclGetUniqueId, ncclResult_t(*)(ncclUniqueId *))(&a.id);
  for (a.rank = 0; a.rank < ranks; ++a.rank) {
    pthread_t t;
    void *failed = NULL;
    if (pthread_create(&t, NULL, rank_main, &a) != 0 || pthread_join(t, &failed) != 0 || failed)
      return 1;
  }
  return 0;
}
