"""Launches kernels along known Python lines, for tools/pylaunches.bt: cudaLaunchKernel through
ctypes on LIBCUDART (its func: gpubt_py_mark of LIBPYMARK, standing in for a kernel's host stub)
and cuLaunchKernel on LIBCUDA (a CUfunction looked up by name first, as Triton does). Writes what
the traceback module says the stack was at each launch, by kernel name:
{name: [[[file, line, function], ...] outermost first, ...]}. LIBCUDA "none": cudart's alone
(the real libcudart would take a stand-in libcuda.so.1 for its driver).
Usage: launches.py LIBCUDART LIBCUDA LIBPYMARK OUT.json"""
import ctypes
import json
import sys
import traceback


class dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


cudart = ctypes.CDLL(sys.argv[1])
cuda = ctypes.CDLL(sys.argv[2]) if sys.argv[2] != "none" else None
stub = ctypes.cast(ctypes.CDLL(sys.argv[3]).gpubt_py_mark, ctypes.c_void_p)
cudart.cudaLaunchKernel.argtypes = [ctypes.c_void_p, dim3, dim3, ctypes.c_void_p, ctypes.c_size_t,
                                    ctypes.c_void_p]
triton = ctypes.c_void_p()
if cuda:
    cuda.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    cuda.cuModuleGetFunction(ctypes.byref(triton), None, b"triton_poi_fused_add_0")
truth = {}


def seen(kernel):  # the caller's stack, its line the launch's
    truth.setdefault(kernel, []).append(
        [[f.filename, f.lineno, f.name] for f in traceback.extract_stack()[:-1]])


def layer():
    seen("gpubt_py_mark"); cudart.cudaLaunchKernel(stub, dim3(2, 1, 1), dim3(128, 1, 1), None, 0, None)


def loss():
    seen("triton_poi_fused_add_0"); cuda.cuLaunchKernel(triton, 1, 1, 1, 32, 1, 1, 0, None, None, None)


def step():
    for _ in range(3):
        layer()
    if cuda:
        loss()


step()
step()
with open(sys.argv[4], "w") as f:
    json.dump(truth, f)
