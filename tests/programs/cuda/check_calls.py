#!/usr/bin/env python3
"""Checks, with bpftrace uprobes and without gpubt, that the GPU test programs make the calls
the gpubt e2e cases count, with the arguments in the registers and stack slots the stdlib
catalog says (dim3 in two registers, 7th+ arguments on the stack), on a machine without a GPU.
Usage: check_calls.py PROGRAMS_DIR. Exit 77 (ctest skip) without root or bpftrace."""
import os
import re
import shutil
import subprocess
import sys

CUDART_SHARED = "/usr/local/cuda/lib64/libcudart.so.13"
HIP = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"
STUB = "/usr/local/cuda/lib64/stubs/libcuda.so"
SP = 'reg("sp")'


def cudart_script(t):
    return f"""
uprobe:{t}:cudaMalloc {{ @sz[arg1] = count(); }}
uretprobe:{t}:cudaMalloc {{ @ret[retval] = count(); }}
uprobe:{t}:cudaMemcpy {{ @kind[arg3] = count(); }}
uprobe:{t}:cudaLaunchKernel {{
  @launch[arg1 & 0xffffffff, arg1 >> 32, arg2 & 0xffffffff, arg3 & 0xffffffff, arg3 >> 32,
          arg4 & 0xffffffff, *(uint64 *)({SP} + 8), *(uint64 *)({SP} + 16)] = count(); }}
uprobe:{t}:cudaDeviceSynchronize, uprobe:{t}:cudaStreamCreate, uprobe:{t}:cudaStreamSynchronize,
uprobe:{t}:cudaStreamDestroy, uprobe:{t}:cudaEventCreate, uprobe:{t}:cudaEventRecord,
uprobe:{t}:cudaEventSynchronize, uprobe:{t}:cudaFree {{ @calls[probe] = count(); }}
"""


CUDART_EXPECT = [
    "@sz[1024]: 3", "@sz[4096]: 2", "@sz[1048576]: 1", "@ret[35]: 6",
    "@kind[1]: 3", "@kind[2]: 1",
    # gridDim (2,1,1) in rsi+rdx, blockDim (128,1,1) in rcx+r8, sharedMem 0, stream NULL on the stack
    "@launch[2, 1, 1, 128, 1, 1, 0, 0]: 4",
    "@calls[cudaFree]: 6", "@calls[cudaDeviceSynchronize]: 1", "@calls[cudaStreamCreate]: 1",
    "@calls[cudaStreamSynchronize]: 1", "@calls[cudaStreamDestroy]: 1",
    "@calls[cudaEventCreate]: 1", "@calls[cudaEventRecord]: 1", "@calls[cudaEventSynchronize]: 1",
]

CU_SCRIPT = f"""
uprobe:{STUB}:cuMemAlloc_v2 {{ @sz[arg1] = count(); }}
uretprobe:{STUB}:cuMemAlloc_v2 {{ @ret[retval] = count(); }}
uprobe:{STUB}:cuMemcpyHtoD_v2, uprobe:{STUB}:cuMemcpyDtoH_v2 {{ @copy[probe, arg2] = count(); }}
uprobe:{STUB}:cuModuleGetFunction {{ @name[str(arg2)] = count(); }}
uprobe:{STUB}:cuLaunchKernel {{
  @launch[arg1, arg2, arg3, arg4, arg5, *(uint32 *)({SP} + 8), *(uint32 *)({SP} + 16)] = count(); }}
uprobe:{STUB}:cuMemAllocManaged, uprobe:{STUB}:cuStreamCreate, uprobe:{STUB}:cuStreamSynchronize,
uprobe:{STUB}:cuStreamDestroy_v2, uprobe:{STUB}:cuCtxSynchronize, uprobe:{STUB}:cuMemFree_v2,
uprobe:{STUB}:cuModuleLoadData, uprobe:{STUB}:cuLibraryLoadData, uprobe:{STUB}:cuLibraryGetKernel,
uprobe:{STUB}:cuMemcpyHtoDAsync_v2, uprobe:{STUB}:cuMemcpyDtoHAsync_v2 {{ @calls[probe] = count(); }}
"""
CU_EXPECT = [
    "@sz[1024]: 2", "@sz[4096]: 1", "@ret[34]: 3",  # CUDA_ERROR_STUB_LIBRARY
    "@copy[cuMemcpyHtoD_v2, 1024]: 1", "@copy[cuMemcpyHtoD_v2, 4096]: 1",
    "@copy[cuMemcpyDtoH_v2, 4096]: 1", "@name[_Z5scalePfi]: 1",
    "@launch[4, 1, 1, 256, 1, 1, 0]: 4",  # blockDimZ, sharedMemBytes: stack slots 0, 1
    "@calls[cuMemAllocManaged]: 1", "@calls[cuStreamCreate]: 1", "@calls[cuStreamSynchronize]: 1",
    "@calls[cuStreamDestroy_v2]: 1", "@calls[cuCtxSynchronize]: 1", "@calls[cuMemFree_v2]: 4",
    "@calls[cuModuleLoadData]: 1", "@calls[cuLibraryLoadData]: 1", "@calls[cuLibraryGetKernel]: 1",
    "@calls[cuMemcpyHtoDAsync_v2]: 1", "@calls[cuMemcpyDtoHAsync_v2]: 1",
]

HIP_SCRIPT = f"""
uprobe:{HIP}:hipMalloc {{ @sz[arg1] = count(); }}
uretprobe:{HIP}:hipMalloc {{ @ret[retval] = count(); }}
uprobe:{HIP}:hipMemcpy {{ @kind[arg3] = count(); }}
uprobe:{HIP}:hipLaunchKernel {{
  @launch[arg1 & 0xffffffff, arg1 >> 32, arg2 & 0xffffffff, arg3 & 0xffffffff, arg3 >> 32,
          arg4 & 0xffffffff, *(uint64 *)({SP} + 8)] = count(); }}
uprobe:{HIP}:hipModuleLaunchKernel {{ @mod[arg1, arg4, *(uint32 *)({SP} + 8)] = count(); }}
uprobe:{HIP}:hipMemcpyAsync, uprobe:{HIP}:hipStreamCreate, uprobe:{HIP}:hipStreamSynchronize,
uprobe:{HIP}:hipDeviceSynchronize, uprobe:{HIP}:hipFree {{ @calls[probe] = count(); }}
"""
HIP_EXPECT = [
    "@sz[1024]: 3", "@sz[4096]: 2", "@sz[1048576]: 1",
    "@ret[101]: 6",  # hipErrorInvalidDevice: what Debian's HIP 5.2 returns without an AMD GPU
    "@kind[1]: 3", "@kind[2]: 1", "@launch[2, 1, 1, 128, 1, 1, 0]: 4", "@mod[2, 128, 1]: 1",
    "@calls[hipMemcpyAsync]: 1", "@calls[hipStreamCreate]: 1", "@calls[hipStreamSynchronize]: 1",
    "@calls[hipDeviceSynchronize]: 1", "@calls[hipFree]: 6",
]


def only_the_child(script):
    """Every probe of SCRIPT filtered to the -c program: a library's uprobes fire in every process
    that maps it (another test suite running the same programs counted twice, then 3x)."""
    return re.sub(r"\{(\n|\s@)", r"/pid == cpid/ {\1", script)


def run(script, prog, env=None):
    full_env = dict(os.environ, **(env or {}))
    res = subprocess.run(["bpftrace", "-e", only_the_child(script), "-c", prog],
                         capture_output=True, text=True, timeout=120, env=full_env)
    return res.stdout


def main():
    progs = sys.argv[1]
    if os.geteuid() != 0 or not shutil.which("bpftrace"):
        print("[SKIP] needs root and bpftrace")
        return 77
    cases = []
    for variant, target in (("static", f"{progs}/cuda_calls_static"), ("shared", CUDART_SHARED)):
        cases.append((f"cuda_calls_{variant}", cudart_script(target),
                      f"{progs}/cuda_calls_{variant}", None, CUDART_EXPECT))
    cases.append(("cu_calls", CU_SCRIPT, f"{progs}/cu_calls",
                  {"LD_LIBRARY_PATH": f"{progs}/cuda-stubs"}, CU_EXPECT))
    cases.append(("hip_calls", HIP_SCRIPT, f"{progs}/hip_calls", None, HIP_EXPECT))
    failed = 0
    for name, script, prog, env, expect in cases:
        if not os.path.exists(prog):
            print(f"[SKIP] {name}: not built")
            continue
        out = run(script, prog, env)
        # `probe` keys print as uprobe:PATH:FUNC; compare by FUNC
        lines = set(re.sub(r"uprobe:[^:\]]*:", "", l).rstrip() for l in out.splitlines())
        missing = [e for e in expect if e not in lines]
        if missing:
            failed += 1
            print(f"[FAIL] {name}: missing {missing}\n{out}")
        else:
            print(f"[ OK ] {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
