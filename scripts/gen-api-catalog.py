#!/usr/bin/env python3
# Generates stdlib/api_catalog_data.cpp: the prototypes of the catalogued CUDA runtime, driver,
# HIP and NCCL calls, read from the vendor headers (names and types exactly as declared), each parameter's
# x86-64 SysV location, and the exported symbols (cuda.h's `#define cuMemAlloc cuMemAlloc_v2`,
# the per-thread-stream variants). Re-run after a toolkit upgrade:
#   scripts/gen-api-catalog.py > stdlib/api_catalog_data.cpp
import re
import sys

CUDA = "/usr/local/cuda/include"
HIP = "/usr/include/hip"  # Debian's libamdhip64-dev

CUDART_FUNCS = """cudaMalloc cudaFree cudaMallocManaged cudaMallocAsync cudaFreeAsync cudaMemcpy
cudaMemcpyAsync cudaMemset cudaLaunchKernel cudaLaunchKernelExC cudaStreamCreate
cudaStreamDestroy cudaStreamSynchronize cudaDeviceSynchronize cudaEventCreate cudaEventRecord
cudaEventSynchronize cudaGetDevice cudaSetDevice cudaGraphLaunch""".split()
CUDA_FUNCS = """cuMemAlloc cuMemFree cuMemAllocManaged cuMemcpyHtoD cuMemcpyDtoH cuMemcpyHtoDAsync
cuMemcpyDtoHAsync cuLaunchKernel cuLaunchKernelEx cuLaunchCooperativeKernel cuStreamCreate
cuStreamDestroy cuStreamSynchronize cuCtxSynchronize cuModuleLoadData cuLibraryLoadData
cuModuleGetFunction cuLibraryGetKernel""".split()
# Undocumented cudart entry points of CUDA 12.8+/13 launches: nvcc's <<<>>> stub calls
# __cudaGetKernel(&handle, hostStub) once, then __cudaLaunchKernel(handle, ...) which calls
# cudaLaunchKernel(func = handle, ...). On a GPU the handle is a cudaKernel_t, not the host stub,
# so kernel names need the handle -> stub pairs __cudaGetKernel hands out. Its header declares
# the parameters unnamed; the names here are ours.
CUDART_INTERNAL = {
    "__cudaGetKernel": "cudaKernel_t *kernel, const void *func",
    "__cudaLaunchKernel": None,  # named in crt/device_functions.h
}
INTERNAL_PTSZ = {"__cudaLaunchKernel": ["__cudaLaunchKernel_ptsz"]}  # nvcc --default-stream per-thread
HIP_FUNCS = """hipMalloc hipFree hipMemcpy hipMemcpyAsync hipLaunchKernel hipModuleLaunchKernel
hipDeviceSynchronize hipStreamCreate hipStreamSynchronize""".split()
# NCCL (RCCL declares the same API): communicators, collectives, point-to-point, groups. libnccl
# exports each as a weak alias of a strong pnccl* (the profiling names): the public name is probed.
NCCL_FUNCS = """ncclGetVersion ncclGetUniqueId ncclCommInitRank ncclCommInitRankConfig ncclCommInitAll
ncclCommSplit ncclCommFinalize ncclCommDestroy ncclCommAbort ncclCommCount ncclCommUserRank
ncclCommCuDevice ncclCommGetAsyncError ncclAllReduce ncclReduce ncclBcast ncclBroadcast
ncclReduceScatter ncclAllGather ncclAlltoAll ncclGather ncclScatter ncclSend ncclRecv
ncclGroupStart ncclGroupEnd""".split()

# library enum, header with the prototypes, return type, headers with symbol-renaming macros
LIBRARIES = [
    ("Cudart", CUDART_FUNCS, f"{CUDA}/cuda_runtime_api.h", "cudaError_t",
     [f"{CUDA}/cuda_runtime_api.h"]),
    ("Cudart", list(CUDART_INTERNAL), f"{CUDA}/crt/device_functions.h", "cudaError_t", []),
    ("Cuda", CUDA_FUNCS, f"{CUDA}/cuda.h", "CUresult", [f"{CUDA}/cuda.h"]),
    ("Hip", HIP_FUNCS, f"{HIP}/hip_runtime_api.h", "hipError_t",
     [f"{HIP}/amd_detail/amd_hip_runtime_pt_api.h"]),
    ("Nccl", NCCL_FUNCS, f"{CUDA}/nccl.h", "ncclResult_t", []),
]

HANDLES = {"cudaKernel_t", "cudaStream_t", "cudaEvent_t", "cudaGraphExec_t", "CUstream", "CUfunction",
           "CUkernel", "CUmodule", "CUlibrary", "CUcontext", "hipStream_t", "hipFunction_t",
           "hipEvent_t", "ncclComm_t"}
ENUMS = {"cudaMemcpyKind", "hipMemcpyKind", "ncclDataType_t", "ncclRedOp_t"}
# Structs passed by value that the SysV ABI puts in memory (MEMORY class: over 16 bytes): they take
# stack slots and no register, so the scalars after them still go in registers.
IN_MEMORY = {"ncclUniqueId": 128}
# (kind, size, signed) of non-pointer scalar types
SCALARS = {
    "size_t": ("Integer", 8, False),
    "unsigned int": ("Integer", 4, False),
    "int": ("Integer", 4, True),
    "CUdeviceptr": ("Pointer", 8, False),  # unsigned long long device address
    "dim3": ("Dim3", 12, False),
}


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def normalise_type(t):
    t = re.sub(r"\s*\*\s*", " * ", t)
    t = " ".join(t.split())
    return t.replace("* *", "**")


def classify(c_type):
    """(kind, size, signed, enum_name) of a declared C type."""
    if c_type.endswith("*"):
        if c_type == "const char *":
            return ("String", 8, False, "")
        return ("Pointer", 8, False, "")
    base = c_type.removeprefix("const ").removeprefix("enum ")
    if base in ENUMS:
        return ("Enum", 4, False, base)
    if base in IN_MEMORY:
        return ("Memory", IN_MEMORY[base], False, "")
    if base in HANDLES:
        return ("Handle", 8, False, "")
    if base in SCALARS:
        return SCALARS[base] + ("",)
    sys.exit(f"gen-api-catalog: no value kind for C type '{c_type}': add it to the tables")


def parse_params(text):
    text = re.sub(r"__(?:dv|dparm)\s*\((?:[^()]|\([^()]*\))*\)", "", text)  # default arguments
    text = re.sub(r"=[^,]*", "", text)  # C++ default arguments
    text = " ".join(text.split())
    if text in ("", "void"):
        return []
    out = []
    for p in text.split(","):
        m = re.fullmatch(r"\s*(.*?[\s*])(\w+)\s*", p)
        if not m:
            sys.exit(f"gen-api-catalog: cannot parse parameter '{p}'")
        out.append((m.group(2), normalise_type(m.group(1))))
    return out


def find_prototype(text, name, ret):
    m = re.search(r"\b" + ret + r"\s+(?:CUDARTAPI\s+|CUDAAPI\s+)?" + re.escape(name) +
                  r"\s*\(([^;{]*?)\)\s*;", text)
    if not m:
        sys.exit(f"gen-api-catalog: no prototype of {name}")
    return parse_params(m.group(1))


def find_symbols(macro_texts, name):
    """Symbols exported for `name`: the macro's target first, then its per-thread variant."""
    for text in macro_texts:
        m = re.search(r"^\s*#\s*define\s+" + re.escape(name) + r"\s+(.*)$", text, re.M)
        if not m:
            continue
        body = m.group(1).strip()
        pt = re.fullmatch(r"__(?:CUDART_API|CUDA_API|HIP_API)_(PTDS|PTSZ|SPT)\((\w+)\)", body)
        if pt:
            return [pt.group(2), pt.group(2) + "_" + pt.group(1).lower()]
        if re.fullmatch(r"\w+", body):
            return [body]
        sys.exit(f"gen-api-catalog: unexpected macro for {name}: {body}")
    return [name]


def locate(params):
    """x86-64 SysV INTEGER-class locations: (on_stack, index, count) per parameter."""
    regs, slots, out = 0, 0, []
    for _, c_type in params:
        kind, size = classify(c_type)[:2]
        if kind == "Memory":
            out.append((True, slots, size // 8))
            slots += size // 8
            continue
        n = 2 if kind == "Dim3" else 1
        if regs + n <= 6:
            out.append((False, regs, n))
            regs += n
        else:
            out.append((True, slots, n))
            slots += n
    return out


def cxx_str(s):
    return '"' + s.replace('"', '\\"') + '"'


def main():
    w = sys.stdout.write
    w("// Generated by scripts/gen-api-catalog.py from the CUDA 13, NCCL and HIP headers: do not edit.\n")
    w('#include "stdlib/api_catalog.h"\n\nnamespace gpubt::stdlib {\nnamespace {\n\n')
    w("using K = ApiValueKind;\n\n")
    rows = []
    for lib, funcs, header, ret, macro_headers in LIBRARIES:
        text = strip_comments(read(header))
        macro_texts = [read(h) for h in macro_headers]
        for name in funcs:
            if CUDART_INTERNAL.get(name):
                params = parse_params(CUDART_INTERNAL[name])
            else:
                params = find_prototype(text, name, ret)
            symbols = find_symbols(macro_texts, name) + INTERNAL_PTSZ.get(name, [])
            w(f"constexpr std::string_view {name}_symbols[] = {{"
              + ", ".join(cxx_str(s) for s in symbols) + "};\n")
            if params:
                w(f"constexpr ApiParam {name}_params[] = {{\n")
                for (pname, c_type), (on_stack, idx, n) in zip(params, locate(params)):
                    kind, size, signed, enum = classify(c_type)
                    where = f"stack slot {idx}" if on_stack else \
                        "+".join(["rdi", "rsi", "rdx", "rcx", "r8", "r9"][idx:idx + n])
                    w(f"    {{{cxx_str(pname)}, {cxx_str(c_type)}, K::{kind}, {size}, "
                      f"{str(signed).lower()}, {cxx_str(enum)}, "
                      f"{{{str(on_stack).lower()}, {idx}, {n}}}}}, // {where}\n")
                w("};\n")
            rows.append((name, lib, ret, bool(params)))
        w("\n")
    w("constexpr ApiFunction k_functions[] = {\n")
    for name, lib, ret, has_params in rows:
        params = f"{name}_params" if has_params else "{}"
        w(f"    {{{cxx_str(name)}, ApiLibrary::{lib}, {name}_symbols, {cxx_str(ret)}, {params}}},\n")
    w("};\n\n} // namespace\n\n")
    w("std::span<const ApiFunction> api_functions() { return k_functions; }\n\n")
    w("} // namespace gpubt::stdlib\n")


if __name__ == "__main__":
    main()
