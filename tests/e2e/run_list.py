#!/usr/bin/env python3
"""-l as the way in (issue 31): what it prints pastes back into a script as the probe it names,
-lv lists tracepoint fields as the installed bpftrace does, and bad patterns are errors."""
import os
import shutil
import subprocess
import sys

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


if __name__ == "__main__":
    sys.exit(run_main("--programs"))
