"""PyTorch allocations and launches at known lines, for the ML suite's Python tools case (issue
30): tensors kept and tensors made and dropped through the CUDA caching allocator, a cudaMalloc
forced by empty_cache(), and elementwise kernels launched. Before each, on the same line, it
records what its own traceback module says the stack is; it prints that truth as one line at the
end: 'truth {"kept_tensor": [[[file, line, function], ...] outermost first, ...], ...}'.
usage: pystack_tools_step.py [--fake LIBCUDART LIBC10]
--fake: no torch, no GPU: the same lines call a stand-in libcudart and libc10_cuda.so through
ctypes (tests/programs: fake-cudart/libcudart.so.13, fake-torch/libc10_cuda.so), so that the
case's judge is tested on a machine without a GPU."""
import argparse
import ctypes
import json
import traceback

ap = argparse.ArgumentParser()
ap.add_argument('--fake', nargs=2)
a = ap.parse_args()
truth = {'kept_tensor': [], 'churn_tensor': [], 'kept_malloc': [], 'launch': []}
MALLOC_BYTES = 256 << 20


def seen(kind):
    # The caller's line: the frame below this one, as a probe in the call on that line sees it.
    truth[kind].append([[f.filename, f.lineno, f.name] for f in traceback.extract_stack()[:-1]])


if a.fake:
    cudart, c10 = ctypes.CDLL(a.fake[0]), ctypes.CDLL(a.fake[1])
    c10.fake_torch_empty.restype = ctypes.c_void_p
    c10.fake_torch_empty.argtypes = [ctypes.c_size_t]
    c10.fake_torch_free.argtypes = [ctypes.c_void_p]
    cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    class Dim3(ctypes.Structure):
        _fields_ = [('x', ctypes.c_uint), ('y', ctypes.c_uint), ('z', ctypes.c_uint)]
    cudart.cudaLaunchKernel.argtypes = [ctypes.c_void_p, Dim3, Dim3, ctypes.c_void_p,
                                        ctypes.c_size_t, ctypes.c_void_p]
    stub = ctypes.cast(c10.fake_torch_free, ctypes.c_void_p)  # a host stub's stand-in

    class Tensor:  # its storage freed when it dies, as a torch tensor's
        def __init__(self, n):
            self.h = c10.fake_torch_empty(n)

        def __del__(self):
            c10.fake_torch_free(self.h)

    def empty(n):
        return Tensor(n)

    def new_block():  # a cudaMalloc of its own, as empty_cache() then a big tensor makes
        p = ctypes.c_void_p()
        cudart.cudaMalloc(ctypes.byref(p), MALLOC_BYTES)
        return Tensor(MALLOC_BYTES)

    def add_one(x):  # one kernel launch
        cudart.cudaLaunchKernel(stub, Dim3(4, 1, 1), Dim3(256, 1, 1), None, 0, None)
        return x
else:
    import torch

    def empty(n):
        return torch.empty(n, dtype=torch.uint8, device='cuda')

    def new_block():
        torch.cuda.empty_cache()  # so the next allocation is a new cudaMalloc
        return torch.empty(MALLOC_BYTES, dtype=torch.uint8, device='cuda')

    def add_one(x):  # one elementwise kernel, launched with cudaLaunchKernel
        return x + 1


def load(kept):
    for _ in range(3):
        seen('kept_tensor'); kept.append(empty(1 << 20))


def step():
    for _ in range(5):
        seen('churn_tensor'); t = empty(4 << 20)
        del t


def layer(x):
    for _ in range(4):
        seen('launch'); x = add_one(x)
    return x


kept = []
load(kept)
step()
kept.append(layer(kept[0]))
seen('kept_malloc'); kept.append(new_block())
# A reference never dropped, as a leak holds one: the interpreter's exit does not free them.
ctypes.pythonapi.Py_IncRef(ctypes.py_object(kept))
print('truth ' + json.dumps(truth), flush=True)
