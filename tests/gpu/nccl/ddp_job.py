#!/usr/bin/env python3
"""A small DDP job with a known answer, for tests/gpu/nccl/nccl_suite.py (issue 27): run under
`torchrun --nproc_per_node=2`. Four Linear layers, fixed seeds, bucket_cap_mb small so each step
all-reduces several buckets, and a DDP comm hook that is the truth gpubt is judged against: it
records each bucket's step, numel and dtype before its all-reduce (op SUM, after dividing by the
world size). At --straggle-step rank 1 sleeps --straggle-s seconds before backward: the others
issue that step's all-reduces and wait on the GPU for it (a straggler; a long sleep is a hang
while it lasts). Each rank writes OUT/rank<R>.json: pid, the hook's calls, the losses (float hex)
and a sha256 of its final parameters, and OUT/rank<R>.straggling while it sleeps.

--backend gloo --device cpu runs it without a GPU (the hook and the arithmetic only)."""
import hashlib
import json
import os
import sys
import threading
import time

# cuBLAS' deterministic workspace, before CUDA starts: traced and plain runs must agree bit for bit.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

from job_args import job_parser  # noqa: E402


def main():
    ap = job_parser()
    ap.add_argument("--bucket-mb", type=float, default=0.5)
    ap.add_argument("--backend", default="nccl")
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.use_deterministic_algorithms(True, warn_only=True)  # a warning, never a failed run
    if a.device == "cuda":
        torch.cuda.set_device(local)
        dev = torch.device("cuda", local)
    else:
        dev = torch.device("cpu")
    try:  # the communicator made now (PyTorch >= 2.3), not at the first collective
        dist.init_process_group(a.backend, device_id=dev if a.device == "cuda" else None)
    except TypeError:
        dist.init_process_group(a.backend)

    torch.manual_seed(0)  # the same initial weights on every rank (DDP broadcasts rank 0's too)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)).to(dev)
    ddp = DDP(model, device_ids=[local] if a.device == "cuda" else None,
              bucket_cap_mb=a.bucket_mb)
    step = [0]
    calls = []

    def hook(state, bucket):
        buf = bucket.buffer()
        calls.append({"step": step[0], "index": bucket.index(), "numel": buf.numel(),
                      "dtype": str(buf.dtype).replace("torch.", "")})
        buf.div_(world)
        fut = dist.all_reduce(buf, op=dist.ReduceOp.SUM, async_op=True).get_future()
        return fut.then(lambda f: f.value()[0])

    ddp.register_comm_hook(None, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    data = torch.Generator(device="cpu").manual_seed(1000 + rank)
    losses = []
    marker = os.path.join(a.out, f"rank{rank}.straggling")
    for step[0] in range(a.steps):
        x = torch.randn(64, 256, generator=data).to(dev)
        y = torch.randint(0, 10, (64,), generator=data).to(dev)
        loss = nn.functional.cross_entropy(ddp(x), y)
        losses.append(loss.item().hex())  # a host sync each step, as a logging loop has
        if step[0] == a.straggle_step and rank == 1:
            open(marker, "w").close()
            time.sleep(a.straggle_s)
            os.unlink(marker)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    if a.device == "cuda":
        torch.cuda.synchronize()
    digest = hashlib.sha256()
    for p in model.parameters():
        digest.update(p.detach().cpu().numpy().tobytes())
    with open(os.path.join(a.out, f"rank{rank}.json"), "w") as f:
        json.dump({"rank": rank, "pid": os.getpid(), "calls": calls, "losses": losses,
                   "params_sha256": digest.hexdigest(), "torch": torch.__version__,
                   "nccl": ".".join(map(str, torch.cuda.nccl.version()))
                   if a.device == "cuda" else ""}, f)
    # The results are out: a communicator teardown that hangs (it has been seen to) must not
    # hold the suite, so it gets 30 s on a thread of its own before the process ends anyway.
    done = threading.Thread(target=dist.destroy_process_group, daemon=True)
    done.start()
    done.join(30)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
