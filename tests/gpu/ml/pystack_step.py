"""A PyTorch training step whose device syncs and cudaMalloc calls happen at known lines, for the
ML suite's pystack case (issue 30). Before each such call, on the same line, it records what its
own traceback module says the stack is; it prints that truth as one line at the end:
'truth {"sync": [[file, line, function], ...] outermost first, ...}' (kind -> list of stacks).
usage: pystack_step.py [--fake LIBPYMARK]
--fake: no torch, no GPU: the same lines call gpubt_py_mark(1|2|3) of tests/programs' libpymark
through ctypes instead (1 sync, 2 device sync, 3 malloc), so the case's judge is tested on a
machine without a GPU."""
import argparse
import json
import traceback

ap = argparse.ArgumentParser()
ap.add_argument('--fake')
a = ap.parse_args()
truth = {'stream_sync': [], 'device_sync': [], 'malloc': []}


def seen(kind):
    # The caller's line: the frame below this one, as a probe in the call on that line sees it.
    truth[kind].append([[f.filename, f.lineno, f.name] for f in traceback.extract_stack()[:-1]])


if a.fake:
    import ctypes
    lib = ctypes.CDLL(a.fake)

    def item(x):
        lib.gpubt_py_mark(1)
        return x

    def synchronize():
        lib.gpubt_py_mark(2)

    def big_tensor():
        lib.gpubt_py_mark(3)

    def step():
        return 0.5
else:
    import torch
    from transformer_step import make_step
    step = make_step()
    item = lambda loss: loss.item()          # cudaMemcpyAsync + cudaStreamSynchronize
    synchronize = torch.cuda.synchronize    # cudaDeviceSynchronize

    def big_tensor():
        torch.cuda.empty_cache()            # so the next allocation is a new cudaMalloc
        return torch.empty(256 << 20, dtype=torch.uint8, device='cuda')


def train(steps):
    for i in range(steps):
        loss = step()
        seen('stream_sync'); print(f'loss {i} {float(item(loss)).hex()}', flush=True)


def checkpoint():
    seen('device_sync'); synchronize()
    seen('malloc'); buf = big_tensor()
    return buf


train(3)
checkpoint()
print('truth ' + json.dumps(truth), flush=True)
