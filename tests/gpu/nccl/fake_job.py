#!/usr/bin/env python3
"""ddp_job.py's stand-in without a GPU or PyTorch, for nccl_suite.py --fake-nccl (CI): the same
arguments and results (OUT/rank<R>.json, the rank1.straggling marker), its collectives made on
tests/programs/nccl's fake libnccl.so.2 (calls that succeed) through ctypes: a communicator of 2
ranks, one broadcast, then per step three all-reduces of DDP-like bucket sizes. Run without RANK
it is the launcher, as torchrun is: it starts ranks 0 and 1 as its children and waits for them."""
import ctypes
import json
import os
import subprocess
import sys
import time

from job_args import job_parser

BUCKETS = [267786, 262656, 131584]  # ddp_job.py's buckets after its first step
NCCL_FLOAT32, NCCL_SUM, NCCL_INT8 = 7, 0, 0


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


def launch():
    ranks = [subprocess.Popen([sys.executable, *sys.argv], env=dict(os.environ, RANK=str(r),
                                                                      LOCAL_RANK=str(r),
                                                                      WORLD_SIZE="2"))
             for r in (0, 1)]
    return max(abs(p.wait()) for p in ranks)


def shared_id(lib, rank, out):
    """Rank 0's ncclGetUniqueId, handed to rank 1 through a file (torchrun's store, in short)."""
    uid, path = UniqueId(), os.path.join(out, "unique_id")
    if rank == 0:
        lib.ncclGetUniqueId(ctypes.byref(uid))
        with open(path + ".tmp", "wb") as f:
            f.write(bytes(uid))
        os.rename(path + ".tmp", path)
    else:
        wait_file(path)
        ctypes.memmove(ctypes.byref(uid), open(path, "rb").read(), ctypes.sizeof(uid))
    return uid


def wait_file(path):
    end = time.time() + 60
    while not os.path.exists(path) and time.time() < end:
        time.sleep(0.02)


def main():
    ap = job_parser()
    a = ap.parse_args()
    if "RANK" not in os.environ:
        return launch()
    rank = int(os.environ["RANK"])
    lib = ctypes.CDLL(os.environ["FAKE_NCCL"])
    comm = ctypes.c_void_p()
    lib.ncclCommInitRank(ctypes.byref(comm), 2, shared_id(lib, rank, a.out), rank)
    # Both ranks start the steps together (as NCCL's init returns on all ranks at once): only
    # the straggler's sleep makes a rank late by much.
    open(os.path.join(a.out, f"ready{rank}"), "w").close()
    wait_file(os.path.join(a.out, f"ready{1 - rank}"))
    send, recv = ctypes.c_void_p(0x1000), ctypes.c_void_p(0x2000)
    # PyTorch's broadcast is ncclBcast, which calls ncclBroadcast inside (one collective).
    lib.ncclBcast(send, ctypes.c_size_t(256), NCCL_INT8, 0, comm, None)
    calls = []
    marker = os.path.join(a.out, f"rank{rank}.straggling")
    for step in range(a.steps):
        time.sleep(0.05)  # the forward
        if step == a.straggle_step and rank == 1:
            open(marker, "w").close()
            time.sleep(a.straggle_s)
            os.unlink(marker)
        for index, numel in enumerate(BUCKETS):
            calls.append({"step": step, "index": index, "numel": numel, "dtype": "float32"})
            lib.ncclAllReduce(send, recv, ctypes.c_size_t(numel), NCCL_FLOAT32, NCCL_SUM, comm,
                              None)
    with open(os.path.join(a.out, f"rank{rank}.json"), "w") as f:
        json.dump({"rank": rank, "pid": os.getpid(), "calls": calls, "losses": [],
                   "params_sha256": "", "torch": "none (fake_job.py)", "nccl": "fake"}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
