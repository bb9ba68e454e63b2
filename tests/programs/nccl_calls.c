// NCCL's host API through dlopen(), as PyTorch loads its own libnccl.so.2:
//   nccl_calls LIB             one rank's calls that fail without a GPU (the real library):
//                              ncclGetVersion, ncclGetUniqueId, ncclCommInitRank (2 ranks, rank 1),
//                              then in a group ncclAllReduce, ncclBroadcast and ncclSend on a null
//                              communicator, ncclGroupEnd, and one ncclAllReduce outside a group.
//   nccl_calls LIB RANKS ITERS [LATE]   RANKS ranks of one ncclUniqueId, one thread each (as a
//                              process driving several GPUs does; threads one after another, so
//                              the calls come in a fixed order), each ncclCommInitRank, one
//                              ncclBcast (PyTorch's broadcast: NCCL's calls ncclBroadcast inside
//                              it), then ITERS ncclAllReduce of (i + 1) * 1024 floats; rank
//                              LATE stops one all-reduce short, as a rank that never reaches a
//                              collective (needs a library whose calls work: the fake one).
//   nccl_calls LIB straggler ITERS AT MS   2 ranks as threads at once, in turn on each collective
//                              (the ncclBcast is seq 0, all-reduce i seq i + 1): rank 1 first,
//                              except at seq AT, where rank 1 waits for rank 0's call to return
//                              and MS ms more, a straggler: only there is rank 1 late, by >= MS.
#include "nccl/nccl_api.h"
#include <dlfcn.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
typedef ncclResult_t (*inplace_bcast_fn)(void *, size_t, ncclDataType_t, int, ncclComm_t,
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
  CALL(ncclBcast, inplace_bcast_fn)(send_buf, 256, ncclInt8, 0, comm, NULL);
  int n = rank == late ? iters - 1 : iters;
  for (int i = 0; i < n; ++i)
    CALL(ncclAllReduce, coll_fn)(send_buf, recv_buf, (size_t)(i + 1) * 1024, ncclFloat32, ncclSum,
                                 comm, NULL);
  CALL(ncclCommDestroy, ncclResult_t(*)(ncclComm_t))(comm);
  return NULL;
}

// Straggler mode: each call waits for its turn; `done` counts the calls made, two a collective.
static pthread_mutex_t turn_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cond = PTHREAD_COND_INITIALIZER;
static int done, straggle_at, straggle_ms;

static void wait_turn(int rank, int seq) {
  int first = seq == straggle_at ? 0 : 1;
  pthread_mutex_lock(&turn_mutex);
  while (done != 2 * seq + (rank == first ? 0 : 1))
    pthread_cond_wait(&turn_cond, &turn_mutex);
  pthread_mutex_unlock(&turn_mutex);
  if (seq == straggle_at && rank != first) {
    struct timespec ts = {straggle_ms / 1000, (long)(straggle_ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
  }
}

static void end_turn(void) {
  pthread_mutex_lock(&turn_mutex);
  done++;
  pthread_cond_broadcast(&turn_cond);
  pthread_mutex_unlock(&turn_mutex);
}

static void *straggler_rank(void *p) {
  const struct rank_args *a = p;
  ncclComm_t comm = NULL;
  if (CALL(ncclCommInitRank, init_fn)(&comm, 2, a->id, a->rank) != ncclSuccess)
    return (void *)1;
  wait_turn(a->rank, 0);
  CALL(ncclBcast, inplace_bcast_fn)(send_buf, 256, ncclInt8, 0, comm, NULL);
  end_turn();
  for (int i = 0; i < a->iters; ++i) {
    wait_turn(a->rank, i + 1);
    CALL(ncclAllReduce, coll_fn)(send_buf, recv_buf, (size_t)(i + 1) * 1024, ncclFloat32, ncclSum,
                                 comm, NULL);
    end_turn();
  }
  CALL(ncclCommDestroy, ncclResult_t(*)(ncclComm_t))(comm);
  return NULL;
}

static int straggler(int iters) {
  struct rank_args a[2] = {{.rank = 0, .iters = iters}, {.rank = 1, .iters = iters}};
  CALL(ncclGetUniqueId, ncclResult_t(*)(ncclUniqueId *))(&a[0].id);
  a[1].id = a[0].id;
  pthread_t t[2];
  void *failed[2] = {NULL, NULL};
  for (int r = 0; r < 2; ++r)
    if (pthread_create(&t[r], NULL, straggler_rank, &a[r]) != 0)
      return 1;
  for (int r = 0; r < 2; ++r)
    if (pthread_join(t[r], &failed[r]) != 0 || failed[r])
      return 1;
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2 && argc < 4) {
    fprintf(stderr, "usage: nccl_calls LIB [RANKS ITERS [LATE]] | LIB straggler ITERS AT MS\n");
    return 2;
  }
  lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "nccl_calls: %s\n", dlerror());
    return 1;
  }
  if (argc == 2)
    return one_rank_failing();
  if (argc == 6 && strcmp(argv[2], "straggler") == 0) {
    straggle_at = atoi(argv[4]);
    straggle_ms = atoi(argv[5]);
    return straggler(atoi(argv[3]));
  }
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
