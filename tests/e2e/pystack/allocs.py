"""Allocates along known Python lines, as a PyTorch script would, for the Python allocation
tools: device memory through cudaMalloc/cudaFree (LIBCUDART, ctypes) and tensors through a
caching allocator's allocate/deleter (LIBC10: tests/programs/python/fake_c10_cuda.cpp). Writes
what the traceback module says the stack was at each call, by what the call was:
{kind: [[[file, line, function], ...] outermost first, ...]}.
Usage: allocs.py LIBCUDART LIBC10 OUT.json"""
import ctypes
import json
import sys
import traceback

cudart, c10 = ctypes.CDLL(sys.argv[1]), ctypes.CDLL(sys.argv[2])
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
cudart.cudaFree.argtypes = [ctypes.c_void_p]
c10.fake_torch_empty.restype = ctypes.c_void_p
c10.fake_torch_empty.argtypes = [ctypes.c_size_t]
c10.fake_torch_free.argtypes = [ctypes.c_void_p]
truth, kept = {}, []
MiB = 1 << 20


def seen(kind):  # the caller's stack, its line the call's (one line: traceback, then the call)
    truth.setdefault(kind, []).append([[f.filename, f.lineno, f.name] for f in traceback.extract_stack()[:-1]])


def load_weights(p):
    seen("kept_malloc"); cudart.cudaMalloc(ctypes.byref(p), MiB)
    kept.append(p.value)


def workspace(p):
    seen("churn_malloc"); cudart.cudaMalloc(ctypes.byref(p), 4 * MiB)
    cudart.cudaFree(p)


def forward():
    seen("kept_tensor"); kept.append(c10.fake_torch_empty(1000))
    for _ in range(4):
        seen("churn_tensor"); t = c10.fake_torch_empty(4096)
        c10.fake_torch_free(t)


for _ in range(2):
    load_weights(ctypes.c_void_p())
for _ in range(3):
    workspace(ctypes.c_void_p())
forward()
forward()

with open(sys.argv[3], "w") as f:
    json.dump(truth, f)
