/* A stand-in libnccl.so.2 whose calls succeed without a GPU, for what the real library cannot
 * show here: communicators that exist (nccl_rank(), nccl_seq(), the ncclsnoop/ncclhang tools).
 * As the real one, it exports each call as a weak alias of a strong pnccl* symbol. The real
 * library's failing calls are traced by the same tests (tests/e2e/cases/nccl.test). */
#include "nccl_api.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ncclComm {
  int rank, nranks;
};

#define PUBLIC(name) __typeof__(p##name) name __attribute__((weak, alias("p" #name)));

ncclResult_t pncclGetVersion(int *version) {
  *version = 22809;
  return ncclSuccess;
}
PUBLIC(ncclGetVersion)

ncclResult_t pncclGetUniqueId(ncclUniqueId *id) {
  memset(id, 0, sizeof *id);
  for (size_t i = 0; i < sizeof id->internal; ++i) /* distinct per run, as NCCL's magic is */
    id->internal[i] = (char)(getpid() * 31 + i);
  return ncclSuccess;
}
PUBLIC(ncclGetUniqueId)

ncclResult_t pncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
  (void)id;
  if (rank < 0 || rank >= nranks)
    return ncclInvalidArgument;
  *comm = malloc(sizeof **comm);
  (*comm)->rank = rank;
  (*comm)->nranks = nranks;
  return ncclSuccess;
}
PUBLIC(ncclCommInitRank)

ncclResult_t pncclCommUserRank(const ncclComm_t comm, int *rank) {
  if (!comm)
    return ncclInvalidArgument;
  *rank = comm->rank;
  return ncclSuccess;
}
PUBLIC(ncclCommUserRank)

ncclResult_t pncclCommDestroy(ncclComm_t comm) {
  free(comm);
  return ncclSuccess;
}
PUBLIC(ncclCommDestroy)


/* The collectives: accepted on any communicator, refused without one (as the real library). */
#define COLLECTIVE(name, ...)                                                                    \
  ncclResult_t p##name(__VA_ARGS__, ncclComm_t comm, cudaStream_t stream) {                      \
    (void)stream;                                                                                \
    return comm ? ncclSuccess : ncclInvalidArgument;                                             \
  }                                                                                              \
  PUBLIC(name)
COLLECTIVE(ncclAllReduce, const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t o)
COLLECTIVE(ncclBroadcast, const void *s, void *r, size_t n, ncclDataType_t t, int root)
COLLECTIVE(ncclReduce, const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t o, int root)
COLLECTIVE(ncclReduceScatter, const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t o)
COLLECTIVE(ncclAllGather, const void *s, void *r, size_t n, ncclDataType_t t)
COLLECTIVE(ncclAlltoAll, const void *s, void *r, size_t n, ncclDataType_t t)
COLLECTIVE(ncclGather, const void *s, void *r, size_t n, ncclDataType_t t, int root)
COLLECTIVE(ncclScatter, const void *s, void *r, size_t n, ncclDataType_t t, int root)

/* As NCCL's src/collectives.cc: the in-place ncclBcast calls the public ncclBroadcast (through
 * the PLT, as libnccl.so.2 2.28 does: `call ncclBroadcast@plt`), so a uprobe on ncclBroadcast
 * fires inside ncclBcast: one collective, two functions' probes. */
ncclResult_t pncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}
PUBLIC(ncclBcast)

ncclResult_t pncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                       ncclComm_t comm, cudaStream_t stream) {
  (void)sendbuff, (void)count, (void)datatype, (void)peer, (void)stream;
  return comm ? ncclSuccess : ncclInvalidArgument;
}
PUBLIC(ncclSend)

ncclResult_t pncclGroupStart(void) { return ncclSuccess; }
PUBLIC(ncclGroupStart)
ncclResult_t pncclGroupEnd(void) { return ncclSuccess; }
PUBLIC(ncclGroupEnd)
