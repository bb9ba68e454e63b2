#!/usr/bin/env python3
"""-l as the way in (issue 31): what it prints pastes back into a script as the probe it names,
-lv lists tracepoint fields as the installed bpftrace does and the GPU API catalog's typed
arguments of CUDA/HIP/NCCL calls, and bad patterns are errors."""
import os
import shutil
import subprocess
import sys
import time

from case_list import case, run_main


def gpubt(ctx, args):
    return subprocess.run([ctx.gpubt] + args, capture_output=True, text=True, errors="replace",
                          stdin=subprocess.DEVNULL, timeout=120)


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def unquoted(line):
    """The probe a -l line names, as the AST dump prints it (no quotes)."""
    return line.replace('\\"', "\0").replace('"', "").replace("\0", '"')


def check_pastes_back(ctx, pattern, limit=8):
    listed = gpubt(ctx, ["-l", pattern])
    expect(listed.returncode == 0, f"-l {pattern}: {listed.stderr}")
    lines = listed.stdout.splitlines()[:limit]
    expect(lines, f"-l {pattern} listed nothing")
    for line in lines:
        r = gpubt(ctx, ["--emit=ast", "-e", line + " { @n = count(); }"])
        expect(r.returncode == 0, f"{line!r} does not parse back: {r.stderr}")
        expect(f" Probe {unquoted(line)}\n" in r.stdout, f"{line!r} parsed as:\n{r.stdout}")


@case
def gpu_kernel_names_paste_back(ctx):
    prog = f"{ctx.programs}/cuda_calls_shared"
    if not os.access(prog, os.X_OK):
        return "SKIP"
    listed = gpubt(ctx, ["-l", f"gpu:kretprobe:{prog}:*"])
    expect('gpu:kretprobe:"scale(float*, int)"\n' in listed.stdout, listed.stdout)
    check_pastes_back(ctx, f"gpu:*:{prog}:*")
    hang = gpubt(ctx, ["-l", f"gpu:hang:{prog}:*"])  # issue 26: CUDA kernels' gpu:hang probes
    expect(hang.stdout == 'gpu:hang:"scale(float*, int)"\n', hang.stdout + hang.stderr)
    check_pastes_back(ctx, f"gpu:hang:{prog}:*")
    verbose = gpubt(ctx, ["-lv", f"gpu:hang:{prog}:*"]).stdout
    expect('gpu:hang:"scale(float*, int)"\n    uint64_t stream\n    uint32_t device\n' in verbose and
           "    uint32_t queued\n    uint32_t exact\n" in verbose, verbose)


@case
def templated_library_kernels_paste_back(ctx):
    lib = "/usr/local/cuda/lib64/libcublasLt.so"
    if not os.path.exists(lib):
        return "SKIP"
    check_pastes_back(ctx, f"gpu:kprobe:{lib}:*splitKreduce_kernel*", limit=4)


@case
def uprobe_names_paste_back(ctx):
    check_pastes_back(ctx, f"uprobe:{ctx.programs}/calls:*")


@case
def host_prefix_lists_as_without(ctx):
    with_prefix = gpubt(ctx, ["-l", "host:uprobe:cudart:cudaMalloc*"])
    without = gpubt(ctx, ["-l", "uprobe:cudart:cudaMalloc*"])
    expect(with_prefix.returncode == 0 and without.returncode == 0, with_prefix.stderr)
    expect("uprobe:cudart:cudaMalloc\n" in without.stdout, without.stdout)
    expect(with_prefix.stdout == without.stdout, with_prefix.stdout)


@case
def unknown_probe_types_are_errors(ctx):
    for pattern, error in [
            ("nosuch:*", "ERROR: Invalid probe type: nosuch\n"),
            ("uprob:/bin/ls:*", "ERROR: Invalid probe type: uprob (did you mean 'uprobe'?)\n"),
            ("tracepiont:*", "ERROR: Invalid probe type: tracepiont (did you mean "
                             "'tracepoint'?)\n"),
            ("kprobe:*", "ERROR: -l lists no kprobe probes (it lists tracepoint, uprobe, "
                         "uretprobe, usdt, software, hardware and gpu probes)\n"),
            ("host:gpu:*", "ERROR: host: cannot prefix a gpu probe\n")]:
        r = gpubt(ctx, ["-l", pattern])
        expect(r.returncode == 1 and r.stdout == "" and r.stderr == error,
               f"-l {pattern}: exit {r.returncode}, {r.stdout!r} {r.stderr!r}")


@case
def lv_tracepoint_fields_as_bpftrace(ctx):
    if not shutil.which("bpftrace"):
        return "SKIP"
    for pattern in ["tracepoint:sched:sched_switch", "tracepoint:syscalls:sys_enter_read*",
                    "t:sched:sched_process_exec"]:
        ours = gpubt(ctx, ["-lv", pattern])
        theirs = subprocess.run(["bpftrace", "-lv", pattern], capture_output=True, text=True,
                                timeout=120)
        expect(ours.returncode == 0 and "    " in ours.stdout, ours.stdout + ours.stderr)
        expect(ours.stdout == theirs.stdout, f"-lv {pattern}:\n{ours.stdout}\nbpftrace:\n"
                                             f"{theirs.stdout}")


def listed_args(stdout):
    """{probe line: [its indented -lv lines, unindented]} of a -lv listing."""
    probes = {}
    for line in stdout.splitlines():
        if line.startswith("    "):
            probes[last].append(line[4:])
        else:
            last = line
            probes[last] = []
    return probes


def check_args_compile(ctx, probe, lines, pid_args=()):
    """Each listed `TYPE NAME` is an args.NAME (a retval under a uretprobe) a script reads."""
    body = " ".join(f"print({'retval' if name == 'retval' else 'args.' + name});"
                    for name in (line.rsplit(" ", 1)[1] for line in lines)
                    if name not in ("commId",))  # ncclUniqueId by value: no script reads it
    r = gpubt(ctx, list(pid_args) + ["--dry-run", "-e", f"{probe} {{ {body} }}"])
    expect(r.returncode == 0, f"{probe}'s listed {lines} do not compile as {body}: {r.stderr}")


@case
def lv_catalog_args_of_api_calls(ctx):
    r = gpubt(ctx, ["-lv", "uprobe:cudart:cudaMemcpy"])
    expect(r.returncode == 0 and r.stdout == "uprobe:cudart:cudaMemcpy\n    void* dst\n"
           "    const void* src\n    size_t count\n    cudaMemcpyKind kind\n",
           f"-lv uprobe:cudart:cudaMemcpy:\n{r.stdout}{r.stderr}")
    check_args_compile(ctx, "uprobe:cudart:cudaMemcpy", listed_args(r.stdout)[
        "uprobe:cudart:cudaMemcpy"])
    # A wildcard: each catalogued function's arguments (per-thread-stream symbols too) and
    # under a uretprobe its retval, an uncatalogued one's nothing; -c changes none of it.
    for extra in ([], ["-c", "/bin/true"]):
        r = gpubt(ctx, extra + ["-lv", "uretprobe:cudart:cudaMemcpy*"])
        expect(r.returncode == 0, r.stderr)
        probes = listed_args(r.stdout)
        for name in ("cudaMemcpy", "cudaMemcpy_ptds", "cudaMemcpyAsync"):
            lines = probes.get(f"uretprobe:cudart:{name}", [])
            expect(lines[-2:] == ["cudaMemcpyKind kind", "cudaError_t retval"] if
                   name != "cudaMemcpyAsync" else lines[-1:] == ["cudaError_t retval"],
                   f"{extra} uretprobe:cudart:{name}: {lines}")
        expect(probes.get("uretprobe:cudart:cudaMemcpy2D") == [], r.stdout)
        check_args_compile(ctx, "uretprobe:cudart:cudaMemcpyAsync",
                           probes["uretprobe:cudart:cudaMemcpyAsync"])


@case
def lv_catalog_args_with_pid(ctx):
    """-p: the driver API by alias through the process's maps, NCCL by the file it maps."""
    stubs = [f"{ctx.programs}/cuda-stubs/libcuda.so.1", f"{ctx.programs}/fake-nccl/libnccl.so.2"]
    if not all(os.path.exists(f) for f in stubs):
        return "SKIP"
    proc = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            env=dict(os.environ, LD_PRELOAD=":".join(stubs)))
    try:
        deadline = time.monotonic() + 60
        while "libnccl.so" not in open(f"/proc/{proc.pid}/maps").read():
            expect(time.monotonic() < deadline, "cat never mapped its LD_PRELOAD")
            time.sleep(0.05)
        pid = ["-p", str(proc.pid)]
        r = gpubt(ctx, pid + ["-lv", "uprobe:cuda:cuMemAlloc_v2"])
        expect(r.stdout == "uprobe:cuda:cuMemAlloc_v2\n    CUdeviceptr* dptr\n"
               "    size_t bytesize\n", r.stdout + r.stderr)
        r = gpubt(ctx, pid + ["-lv", "uretprobe:*:ncclAllReduce"])
        probes = listed_args(r.stdout)
        probe = f"uretprobe:{os.path.realpath(stubs[1])}:ncclAllReduce"
        expect(probes.get(probe, [])[3:] == ["ncclDataType_t datatype", "ncclRedOp_t op",
                                              "ncclComm_t comm", "cudaStream_t stream",
                                              "ncclResult_t retval"], r.stdout + r.stderr)
        check_args_compile(ctx, probe, probes[probe], pid)
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    sys.exit(run_main("--programs"))
