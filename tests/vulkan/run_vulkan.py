#!/usr/bin/env python3
"""gpu probes in Vulkan compute shaders, end to end: gpubt runs the Vulkan test program under its
layer on whatever Vulkan driver is there (Mesa's lavapipe in CI, NVIDIA's on the GPU machine) and
the counts must be exact, the program's own results unchanged.

Usage: run_vulkan.py --gpubt PATH --programs DIR. Exits 77 (skipped) when no Vulkan device runs
the program uninstrumented.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77


def run(cmd, env, timeout=120):
    # A case that hangs fails alone (its result: exit 124, what it printed) and the rest still
    # run: on the H200 one timeout ended the whole Vulkan suite with a traceback.
    try:
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        def text(b):
            return b.decode(errors='replace') if isinstance(b, bytes) else (b or '')
        return subprocess.CompletedProcess(cmd, 124, text(e.stdout),
                                           text(e.stderr) + f'\n(timed out after {timeout} s)')


def map_rows(text):
    rows = {}
    for m in re.finditer(r"^@(\w*)(?:\[(\d+)\])?: (\d+)$", text, re.M):
        rows[(m.group(1), int(m.group(2)) if m.group(2) else None)] = int(m.group(3))
    return rows


def subgroup_counts(invocations, local):
    """A check of `@l[lane] = count(); @w[warp] = count();`: every lane 0..S-1 counted
    invocations/S times and every subgroup of a workgroup invocations/(local/S) times, for the
    device's subgroup size S."""
    def check(got):
        lanes = sorted(k for (m, k) in got if m == "l")
        size = len(lanes)
        if size == 0 or local % size or lanes != list(range(size)):
            return False
        want = {("l", k): invocations // size for k in range(size)}
        want.update({("w", w): invocations // (local // size) for w in range(local // size)})
        return got == want
    return check


def report(ok, name, r):
    print(f"[{'PASS' if ok else 'FAIL'}] {name}")
    if not ok:
        print(f"  exit {r.returncode}\n  stdout: {r.stdout[-800:]}\n  stderr: {r.stderr[-1500:]}")
    return not ok


def check_clocks(gpubt, prog, n, invocations, env):
    """nsecs is on the host's CLOCK_MONOTONIC, as bpftrace's: the probes' readings lie between
    the host's readings around the run; elapsed times are >= 0 and shorter than the run; clock (the Subgroup-scope counter) runs forward within a probe."""
    failed = 0
    t0 = time.monotonic_ns()
    r = run([gpubt, "-e", "gpu:kprobe:main { @a = min(nsecs); } "
             "gpu:kretprobe:main { @t = max(nsecs); }", "-c", f"{prog} {n}"], env)
    t1 = time.monotonic_ns()
    got = map_rows(r.stdout)
    a, t = got.get(("a", None)), got.get(("t", None))
    ok = r.returncode == 0 and a is not None and t is not None and t0 <= a <= t <= t1
    failed += report(ok, f"nsecs on CLOCK_MONOTONIC: {t0} <= {a} <= {t} <= {t1}", r)
    # Per workgroup, its first entry to its last exit; per invocation, the dispatch's first entry
    # (launch_start, a hidden kprobe) to its exit, in a histogram.
    r = run([gpubt, "-e", "gpu:kprobe:main { @a[bid_x] = min(nsecs); } gpu:kretprobe:main { "
             "@t[bid_x] = max(nsecs); $d = nsecs - launch_start; @lo = min($d); @hi = max($d); "
             "@h = hist($d); }", "-c", f"{prog} {n}"], env)
    t1 = time.monotonic_ns()
    got = map_rows(r.stdout)
    groups = {k for (m, k) in got if m == "a"}
    spans = [got[("t", b)] - got[("a", b)] for b in groups if ("t", b) in got]
    lo, hi = got.get(("lo", None)), got.get(("hi", None))
    ok = (r.returncode == 0 and len(spans) == invocations // 64 and
          all(0 <= d < t1 - t0 for d in spans) and lo is not None and hi is not None and
          0 <= lo <= hi < t1 - t0 and "@h:" in r.stdout)
    failed += report(ok, f"kprobe to kretprobe elapsed: per workgroup {min(spans, default=None)}.."
                     f"{max(spans, default=None)} ns, per invocation {lo}..{hi} ns", r)
    r = run([gpubt, "-e", "gpu:kretprobe:main { $c = clock; @c = min(clock - $c); "
             "@z = min(clock); @n = count(); }", "-c", f"{prog} {n}"], env)
    got = map_rows(r.stdout)
    ok = (r.returncode == 0 and got.get(("n", None)) == invocations and
          0 <= got.get(("c", None), -1) < 10**12 and got.get(("z", None), 0) > 0)
    failed += report(ok, "clock reads the subgroup's counter", r)
    return failed


def check_clock_after_wrap(gpubt, prog, n, env):
    """A dispatch submitted 4.5 s after the device was made (and its clock measured): lavapipe's
    32-bit clock has wrapped since (every 4.29 s), and nsecs still lies between the submit's and
    the run's end on the host's clock (it came out 4.29 s early before)."""
    r = run([gpubt, "-e", "gpu:kprobe:main { @a = min(nsecs); } "
             "gpu:kretprobe:main { @t = max(nsecs); }", "-c", f"{prog} {n}"],
            dict(env, VK_VECTOR_ADD_DELAY_MS="4500"))
    t1 = time.monotonic_ns()
    got = map_rows(r.stdout)
    m = re.search(r"dispatch submitted at (\d+)", r.stdout)
    a, t = got.get(("a", None)), got.get(("t", None))
    ok = (r.returncode == 0 and m is not None and a is not None and t is not None and
          int(m.group(1)) <= a <= t <= t1)
    return report(ok, f"nsecs 4.5 s after the clock was measured: "
                  f"{m.group(1) if m else None} <= {a} <= {t} <= {t1}", r)


def check_clocks_under_load(gpubt, prog, n, invocations, env):
    """The same clock checks with two busy loops per CPU running beside them (CI's 2-CPU machine
    runs builds beside the suite): the clock measurement takes longer readings where it must, and
    never refuses the probes (it did, 'the device clock did not advance', when lavapipe's 32-bit
    clock wrapped between its readings; that case is DeviceClockModel.AcrossA32BitWrap)."""
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(2 * (os.cpu_count() or 1))]
    try:
        failed = check_clocks(gpubt, prog, n, invocations, env)
    finally:
        for p in busy:
            p.kill()
            p.wait()
    return failed


def check_keyless_updates(gpubt, prog, n, invocations, env):
    """A map without a key has one slot: lanes of a subgroup that found it being claimed by one
    of them update it too instead of dropping the update (`+=` is a plain read-modify-write, as
    on CUDA, so its value is not a count; count() is)."""
    r = run([gpubt, "-e", "gpu:kretprobe:main { @c += 1; @d = @d + 1; @e++; @v = tid; "
             "@n = count(); }", "-c", f"{prog} {n}"], env)
    got = map_rows(r.stdout)
    ok = (r.returncode == 0 and "Lost" not in r.stderr and
          got.get(("n", None)) == invocations and
          all(1 <= got.get((m, None), 0) <= invocations for m in "cde") and
          0 <= got.get(("v", None), -1) < invocations)
    return report(ok, "keyless maps: no update dropped", r)


def check_debug_names(gpubt, prog, n, invocations, env):
    """Shaders are matched by the names programs give them with VK_EXT_debug_utils too (GLSL's
    entry points are all `main`), and `kernel` is that name: a pipeline named once its module is
    destroyed (the layer makes it again with the probes), and a module named before its
    pipeline is made."""
    failed = 0
    for var, name, probe, dispatches in (("VK_VECTOR_ADD_PIPELINE_NAME", "vadd", "kretprobe", 2),
                                         ("VK_VECTOR_ADD_MODULE_NAME", "vmod", "kprobe", 1)):
        r = run([gpubt, "-e", f"gpu:{probe}:v* {{ @[kernel] = count(); }}", "-c",
                 f"{prog} {n} {dispatches}"], dict(env, **{var: name}))
        want = f"@[{name}]: {dispatches * invocations}"
        ok = r.returncode == 0 and want in r.stdout and f"vk_vector_add: ok {n}" in r.stdout
        failed += report(ok, f"{var.split('_')[3].lower()} named {name}: {want}", r)
    return failed


def bundled_tool(name):
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", name)


def check_kerneltime(gpubt, prog, n, env):
    """tools/kerneltime.bt as written: one count per dispatch in its histogram."""
    r = run([gpubt, bundled_tool("kerneltime.bt"), "-c", f"{prog} {n} 3"], env)
    counts = re.findall(r"^[\[(][^\])]*[\])]\s+(\d+)\s+\|", r.stdout, re.M)
    ok = r.returncode == 0 and "@kernel_us[main]" in r.stdout and \
        sum(int(c) for c in counts) == 3
    return report(ok, "tools/kerneltime.bt: 3 dispatches in the histogram", r)


def check_topkernels(gpubt, prog, n, env):
    """tools/topkernels.bt as written: 3 calls of main, its total all kernels' time (the only
    kernel), its mean the total over the calls; END's table (host reads of the GPU's maps) says
    the same numbers as the maps and main's share, 100.00%."""
    r = run([gpubt, bundled_tool("topkernels.bt"), "-c", f"{prog} {n} 3"], env)
    rows = {m: int(v) for m, v in re.findall(r"^@(\w+)(?:\[main\])?: (\d+)$", r.stdout, re.M)}
    table = re.findall(r"^main +(\d+) +(\d+) +(\d+) +(\d+\.\d\d)%$", r.stdout, re.M)
    every = re.findall(r"^\(all kernels\) +(\d+)$", r.stdout, re.M)
    ok = r.returncode == 0 and rows.get("calls") == 3 and rows.get("gpu_total_us", 0) > 0 and \
        rows.get("all_kernels_us") == rows["gpu_total_us"] and \
        rows.get("gpu_avg_us") == rows["gpu_total_us"] // 3 and \
        "# of Calls" in r.stdout and \
        table == [("3", str(rows["gpu_total_us"]), str(rows["gpu_avg_us"]), "100.00")] and \
        every == [str(rows["all_kernels_us"])]
    return report(ok, f"tools/topkernels.bt: 3 calls of main, total = all, mean = total / 3, "
                      f"share 100.00% ({rows} {table})", r)


def check_host_reads(gpubt, prog, n, invocations, env):
    """END reads each kind of aggregation gpu probes update (gpubt copies the GPU's values into
    the BPF maps before END), against what 3 dispatches of 16 groups of 64 must give: counts,
    sums, the least and greatest tid, the mean tid, and each bid_x % 3 key's share of a keyed
    sum in hundredths of a percent (6, 5 and 5 of the 16 groups)."""
    script = ("gpu:kprobe:main { @n = count(); @s = sum(2); @lo = min(tid); @hi = max(tid); "
              "@mean = avg(tid); @by[bid_x % 3] = sum(1); } "
              "END { $all = (uint64)@n; printf(\"kinds %d %d %d %d %d\\n\", $all, (int64)@s, "
              "(int64)@lo, (int64)@hi, (int64)@mean); "
              "for ($kv : @by) { printf(\"share %d %d %d\\n\", $kv.0, $kv.1, "
              "(uint64)$kv.1 * 10000 / $all); } }")
    r = run([gpubt, "-e", script, "-c", f"{prog} {n} 3"], env)
    total = 3 * invocations
    kinds = re.findall(r"^kinds (\d+) (\d+) (\d+) (\d+) (\d+)$", r.stdout, re.M)
    shares = {int(k): (int(v), int(bp)) for k, v, bp in
              re.findall(r"^share (\d+) (\d+) (\d+)$", r.stdout, re.M)}
    groups = {0: 6, 1: 5, 2: 5}  # bid_x 0..15 by bid_x % 3
    want_shares = {k: (3 * g * 64, g * 10000 // 16) for k, g in groups.items()}
    ok = (r.returncode == 0 and
          kinds == [(str(total), str(2 * total), "0", str(invocations - 1),
                     str((invocations - 1) // 2))] and shares == want_shares)
    return report(ok, f"END reads count, sum, min, max, avg and a keyed sum's shares of gpu maps "
                      f"({kinds} {shares})", r)


def check_timeline(gpubt, prog, n, env):
    """--timeline: one GPU span per dispatch, named by its entry point, from its first
    invocation's start to its last one's exit (the hidden probes use last_thread)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        r = run([gpubt, "--timeline", path, "-e", "gpu:kretprobe:main { @ = count(); }", "-c",
                 f"{prog} {n} 3"], env)
        spans = []
        if os.path.exists(path):
            with open(path) as f:
                trace = json.load(f)
            events = trace["traceEvents"] if isinstance(trace, dict) else trace
            spans = [e for e in events if e.get("ph") == "X" and e.get("cat") == "gpu"]
    ok = (r.returncode == 0 and len(spans) == 3 and all(s["name"] == "main" and s["dur"] > 0
                                                         for s in spans))
    return report(ok, f"--timeline: {len(spans)} GPU spans for 3 dispatches", r)


def check_killed(gpubt, prog, n, invocations, env):
    """A program killed by SIGKILL (no exit handlers run) still shows what its probes counted up
    to its last wait for the GPU, and gpubt says how it died."""
    r = run([gpubt, "-e", "gpu:kretprobe:main { @ = count(); }", "-c", f"{prog} {n} 1 kill"], env)
    ok = (r.returncode != 0 and map_rows(r.stdout) == {("", None): invocations} and
          "killed by SIGKILL" in r.stderr)
    return report(ok, "killed program: counts up to its last wait, and how it died", r)


def libvulkan():
    """The Vulkan loader the program links, for a host probe on its functions."""
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    m = re.search(r"libvulkan\.so\.1 \(libc6,x86-64\) => (\S+)", out)
    return m.group(1) if m else "libvulkan.so.1"


def check_gpu_to_host_map(gpubt, prog, n, env):
    """A map gpu probes write and host probes read is copied into its BPF map after the
    program's waits and at its end (as the CUDA agent does at synchronizations): END prints it,
    and a host probe that runs after the waits (vkDestroyPipeline, after the last
    vkQueueWaitIdle) reads it."""
    failed = 0
    r = run([gpubt, "-e", "gpu:kprobe:main /tid == 0/ { @last = 5; } END { print(@last); }",
             "-c", f"{prog} {n}"], env)
    ok = r.returncode == 0 and r.stdout.count("@last: 5") == 2 and \
        f"vk_vector_add: ok {n}" in r.stdout
    failed += report(ok, "a map gpu probes write: END and the exit print it", r)
    r = run([gpubt, "-e", "gpu:kprobe:main /tid == 0/ { @last = 5; } "
             f"uprobe:{libvulkan()}:vkDestroyPipeline {{ @seen = @last + 1; }}",
             "-c", f"{prog} {n}"], env)
    got = map_rows(r.stdout)
    ok = r.returncode == 0 and got.get(("seen", None)) == 6 and got.get(("last", None)) == 5
    failed += report(ok, "a map gpu probes write: a host probe reads it after the waits", r)
    # A program that waits 2000 times: the layer copied the map into its BPF map after each wait
    # (4,000 and more bpf calls: 2 per copy). Now a bucket of 16 copies that fills at 100 a
    # second: at most 16 + 100 a second of the run, counted from the program's own bpf calls.
    script = ("gpu:kprobe:main /tid == 0/ { @last = 5; } "
              "tracepoint:syscalls:sys_enter_bpf /pid == cpid/ { @bpf = count(); @seen = @last; }")
    t0 = time.time()
    r = run([gpubt, "-e", script, "-c", f"{prog} 64"], dict(env, VK_VECTOR_ADD_WAITS="2000"))
    took = time.time() - t0
    calls = map_rows(r.stdout).get(("bpf", None), 0)
    bound = 2 * (16 + 100 * took + 3) + 8
    ok = r.returncode == 0 and 0 < calls <= bound and map_rows(r.stdout).get(("last", None)) == 5
    failed += report(ok, f"2000 waits: {calls} bpf calls for the map copies in {took:.1f} s "
                     f"(at most {bound:.0f})", r)
    return failed


def check_entry_points(gpubt, prog, n, invocations, env):
    """Probes go to the entry point dispatched: entry_points.spv has alpha and beta (functions of
    their own calling one shared function) and gamma and delta (two entry points on one
    function); only the one the program runs is counted, at entry and at exit."""
    if not os.path.exists(os.path.join(os.path.dirname(prog), "entry_points.spv")):
        print("[SKIP] entry_points.spv not built (no spirv-as)")
        return 0
    failed = 0
    for entry in ("alpha", "beta", "gamma", "delta"):
        dump = tempfile.mkdtemp(prefix="gpubt-vk-dump-")
        r = run([gpubt, "-e", "gpu:kprobe:* { @[kernel] = count(); } "
                 "gpu:kretprobe:* { @r[kernel] = count(); }", "-c", f"{prog} {n}"],
                dict(env, VK_VECTOR_ADD_SHADER="entry_points.spv", VK_VECTOR_ADD_ENTRY=entry,
                     GPUBT_VULKAN_DUMP=dump))
        got = dict(((m, k), int(v)) for m, k, v in
                   re.findall(r"^@(\w*)\[(\w+)\]: (\d+)$", r.stdout, re.M))
        want = {("", entry): invocations, ("r", entry): invocations}
        linked = [os.path.join(dump, f) for f in os.listdir(dump)]
        valid = not shutil.which("spirv-val") or (linked and all(subprocess.run(
            ["spirv-val", "--target-env", "vulkan1.2", f]).returncode == 0 for f in linked))
        shutil.rmtree(dump, ignore_errors=True)
        ok = (r.returncode == 0 and got == want and valid and
              f"vk_vector_add: ok {n}" in r.stdout)
        failed += report(ok, f"entry point {entry} of 4 in one module: {got}", r)
    return failed


def check_blocks(gpubt, prog, groups, local, env):
    """gpu:block_begin and gpu:block_end fire once per workgroup (its first invocation in, its
    last one out), whichever return its invocations leave by: n = 1001 sends the last 23 of the
    last group out early. Either alone (the other side is a hidden probe), both together, over 3
    dispatches (the words are freed for the next one), with builtins of the thread that ran it."""
    failed = 0
    n = 1001
    cases = [
        ("gpu:block_begin:main { @b[bid_x] = count(); @t = sum(tid / 64 == bid_x); }", "1",
         {**{("b", g): 1 for g in range(groups)}, ("t", None): groups}),
        ("gpu:block_end:main { @e[bid_x] = count(); @k = sum(bdim_x); }", "1",
         {**{("e", g): 1 for g in range(groups)}, ("k", None): groups * local}),
        ("gpu:block_begin:main { @b = count(); } gpu:block_end:main { @e = count(); } "
         "gpu:kretprobe:main { @n = count(); }", "3",
         {("b", None): 3 * groups, ("e", None): 3 * groups, ("n", None): 3 * groups * local}),
    ]
    for script, dispatches, want in cases:
        r = run([gpubt, "-e", script, "-c", f"{prog} {n} {dispatches}"], env)
        got = map_rows(r.stdout)
        ok = r.returncode == 0 and got == want and f"vk_vector_add: ok {n}" in r.stdout
        failed += report(ok, f"block probes, {dispatches} dispatch(es): {script} -> {got}", r)
    # The body runs in one lane, but active_lanes is its subgroup's as the probe began: all of
    # them at entry, as gpu:kprobe sees.
    r = run([gpubt, "-e", "gpu:block_begin:main { @a[popcount(active_lanes)] = count(); } "
             "gpu:kprobe:main { @k[popcount(active_lanes)] = count(); }", "-c", f"{prog} {n}"], env)
    got = map_rows(r.stdout)
    size = [k for (m, k) in got if m == "k"]
    ok = (r.returncode == 0 and len(size) == 1 and
          got == {("k", size[0]): groups * local, ("a", size[0]): groups})
    failed += report(ok, f"active_lanes in gpu:block_begin is the subgroup's: {got}", r)
    return failed


def check_active_lanes(gpubt, prog, groups, local, env):
    """active_lanes is the subgroup's ballot at the probe: every lane of a subgroup at entry;
    at the exit, only those leaving by the same return (n = 1001: the subgroup holding tid 1001
    parts there, whatever the device's subgroup size S)."""
    n = 1001
    r = run([gpubt, "-e", "gpu:kprobe:main { @in[popcount(active_lanes)] = count(); "
             "@l[lane] = count(); } gpu:kretprobe:main { @out[popcount(active_lanes)] = count(); }",
             "-c", f"{prog} {n}"], env)
    got = map_rows(r.stdout)
    size = len([k for (m, k) in got if m == "l"])
    invocations = groups * local
    want = {("l", k): invocations // max(size, 1) for k in range(size)}
    want[("in", size)] = invocations
    for t in range(invocations):
        group = range(t - t % size, t - t % size + size) if size else []
        key = ("out", sum((u < n) == (t < n) for u in group))
        want[key] = want.get(key, 0) + 1
    ok = r.returncode == 0 and size > 0 and got == want and f"vk_vector_add: ok {n}" in r.stdout
    return report(ok, f"active_lanes at entry and at both returns, subgroups of {size}: {got}", r)


def check_listing(gpubt, prog, n, env):
    """-l 'gpu:*' -c runs a Vulkan program for the shaders it makes (they exist only then) and
    lists them as probes, as -l lists a CUDA program's kernels: every compute entry point of a
    module, not only the one dispatched, and the debug names of modules and pipelines; the
    program's output goes to stderr, so stdout is the list; each line pastes into a script."""
    failed = 0
    r = run([gpubt, "-l", "gpu:*", "-c", f"{prog} {n}"], env)
    ok = (r.returncode == 0 and r.stdout == "gpu:kprobe:main\ngpu:kretprobe:main\n"
          "gpu:block_begin:main\ngpu:block_end:main\n"
          and f"vk_vector_add: ok {n}" in r.stderr and "to see the Vulkan compute shaders" in r.stderr)
    failed += report(ok, f"-l 'gpu:*' -c lists the shader: {r.stdout.split()}", r)
    probe = r.stdout.splitlines()[0] if r.stdout else "gpu:kprobe:none"
    r = run([gpubt, "-e", probe + " { @ = count(); }", "-c", f"{prog} {n}"], env)
    ok = r.returncode == 0 and map_rows(r.stdout).get(("", None)) == 1024
    failed += report(ok, f"the listed {probe} pastes into a script", r)
    named = dict(env, VK_VECTOR_ADD_MODULE_NAME="vmod", VK_VECTOR_ADD_PIPELINE_NAME="vadd")
    r = run([gpubt, "-l", "gpu:kprobe:v*", "-c", f"{prog} {n}"], named)
    ok = r.returncode == 0 and r.stdout == "gpu:kprobe:vadd\ngpu:kprobe:vmod\n"
    failed += report(ok, f"debug names of the module and the pipeline: {r.stdout.split()}", r)
    if os.path.exists(os.path.join(os.path.dirname(prog), "entry_points.spv")):
        r = run([gpubt, "-lv", "gpu:kretprobe:*", "-c", f"{prog} {n}"],
                dict(env, VK_VECTOR_ADD_SHADER="entry_points.spv", VK_VECTOR_ADD_ENTRY="beta"))
        rows = [l for l in r.stdout.splitlines() if not l.startswith("#")]
        ok = r.returncode == 0 and rows == [f"spirv gpu:kretprobe:{e}"
                                            for e in ("alpha", "beta", "delta", "gamma")]
        failed += report(ok, f"-lv: every entry point of the module: {rows}", r)
    r = run([gpubt, "-l", "gpu:*:nosuch*", "-c", f"{prog} {n}"], env)
    ok = (r.returncode == 1 and r.stdout == "" and
          "made no Vulkan compute shader named 'nosuch*'" in r.stderr)
    failed += report(ok, "a pattern no shader matches is an error", r)
    return failed


def check_many_pipelines(gpubt, prog, env):
    """A program that makes, runs and destroys 400 modules and pipelines (as programs that build
    shaders on the fly do) has every dispatch traced: a destroyed entry point's context slot is
    used again. Where the slots run out (GPUBT_VULKAN_ENTRY_SLOTS=1 here: the program's first
    pipeline stays alive), each untraced entry point is said and the exit says how many."""
    failed = 0
    r = run([gpubt, "-e", "gpu:kprobe:main { @ = count(); }", "-c", f"{prog} 64"],
            dict(env, VK_VECTOR_ADD_PIPELINES="400"), timeout=600)
    ok = (r.returncode == 0 and map_rows(r.stdout) == {("", None): 401 * 64} and
          "not traced" not in r.stderr and "vk_vector_add: ok 64" in r.stdout)
    failed += report(ok, f"401 pipelines made and destroyed, every dispatch traced: "
                     f"{map_rows(r.stdout)}", r)
    r = run([gpubt, "-e", "gpu:kprobe:main { @ = count(); }", "-c", f"{prog} 64"],
            dict(env, VK_VECTOR_ADD_PIPELINES="3", GPUBT_VULKAN_ENTRY_SLOTS="1"))
    ok = (map_rows(r.stdout) == {("", None): 64} and
          r.stderr.count("main: not traced: more than 1 instrumented entry points") == 3 and
          "3 compute entry point(s) the probes matched ran without them" in r.stderr and
          "gpubt: partially traced: 3 module(s), kernel(s) or entry point(s)" in r.stderr and
          r.returncode == 5)
    failed += report(ok, "entry points past the limit: each said, counted at the exit, and the "
                     "exit status is 5 (partially traced)", r)
    return failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpubt", required=True)
    ap.add_argument("--programs", required=True)
    args = ap.parse_args()
    env = dict(os.environ)
    # The layer times no dispatch: last_thread probes (kerneltime.bt's) stay in the shaders
    # (issue 25: elsewhere gpubt runs launch-level ones from the CUDA agent's launch records).
    env["GPUBT_LAUNCH_PROBES"] = "device"
    if "XDG_RUNTIME_DIR" not in env:  # lavapipe needs one
        env["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="gpubt-xdg-")
    prog = os.path.join(args.programs, "vk_vector_add")
    if not os.path.exists(prog):
        print("[SKIP] vk_vector_add not built (no Vulkan loader or glslang)")
        return SKIP
    plain = run([prog], env)
    if plain.returncode != 0:
        print("[SKIP] no Vulkan device runs the program:", plain.stderr.strip())
        return SKIP

    n, groups, local = 1000, 16, 64  # 1024 invocations, 24 of them past n (the early return)
    invocations = groups * local
    cases = [
        # (script, program args, expected rows, name)
        ("gpu:kprobe:main { @ = count(); }", [str(n)], {("", None): invocations},
         "one count per invocation at entry"),
        ("gpu:kretprobe:main { @ = count(); }", [str(n), "3"], {("", None): 3 * invocations},
         "3 dispatches (run at entry: the same result)"),
        # A printf keeps it at the exit: a call before each of main's two returns, each
        # invocation passing one of them.
        ('gpu:kretprobe:main { @c = count(); if (tid > 100000) { printf("never\\n"); } }',
         [str(n), "2"], {("c", None): 2 * invocations}, "before every return"),
        ("gpu:kretprobe:main { @s = sum(bdim_x * gdim_x); @t = sum(tid); @b = sum(bid_x); }",
         [str(n)], {("s", None): invocations * invocations,
                    ("t", None): invocations * (invocations - 1) // 2,
                    ("b", None): local * groups * (groups - 1) // 2},
         "tid, bid_x, workgroup size and count"),
        ("gpu:kretprobe:main { @[tid] = count(); }", [str(n)],
         {("", t): 1 for t in range(invocations)}, "per invocation"),
        ("gpu:kprobe:main { @[tid] = count(); }", [str(n), "3"],
         {("", t): 3 for t in range(invocations)}, "per invocation, 3 dispatches"),
        ("gpu:kretprobe:main { @[bid_x] = count(); }", [str(n)],
         {("", b): local for b in range(groups)}, "per workgroup"),
        # Subgroup aggregation: keys and values that differ within a subgroup, at both returns
        # (the invocations past n leave early, so the subgroups there are partly active).
        ("gpu:kretprobe:main { @[tid % 3] = count(); @s[tid % 5] = sum(tid); }", [str(n)],
         {**{("", k): len(range(k, invocations, 3)) for k in range(3)},
          **{("s", k): sum(range(k, invocations, 5)) for k in range(5)}},
         "keys and sums that differ within a subgroup"),
        ("gpu:kretprobe:main { @mn[tid / 100] = min(tid); @mx[tid / 100] = max(tid); "
         "@a[bid_x % 2] = avg(tid % 7); }", [str(n)],
         {**{("mn", k): 100 * k for k in range(11)},
          **{("mx", k): min(100 * k + 99, invocations - 1) for k in range(11)},
          **{("a", k): sum(t % 7 for t in range(invocations) if t // local % 2 == k) //
             (invocations // 2) for k in range(2)}},
         "min, max and avg grouped within a subgroup"),
        # Keys the same for the whole dispatch: each key spread over slots by SM, merged on
        # the host.
        ("gpu:kretprobe:main { @c[1] = count(); @s[2] = sum(tid); @mn[3] = min(tid); "
         "@mx[gdim_x] = max(tid); }", [str(n), "2"],
         {("c", 1): 2 * invocations, ("s", 2): 2 * sum(range(invocations)), ("mn", 3): 0,
          ("mx", groups): invocations - 1},
         "launch-uniform keys, spread over slots"),
        # Keys that repeat within a subgroup (aggregated first) and keys the same for the whole
        # dispatch, whose slots each entry point's ctx caches (gdim_x's: tagged with the grid
        # size, which here changes with each of 3 dispatches of 16, 15 and 14 workgroups); a key
        # of two launch sizes, and a max, under the same keys.
        ("gpu:kretprobe:main { @r[tid % 100] = count(); @b[bid_x] = count(); @c[5] = count(); "
         "@g[gdim_x] = count(); @t[gdim_x * 1000 + 7] = sum(2); @m[gdim_x * 100 + bdim_x] = "
         "count(); @x[gdim_x] = max(tid); }", [str(n), "3", "shrink"],
         {**{("r", k): sum(len(range(k, local * (groups - d), 100)) for d in range(3))
             for k in range(100)},
          **{("b", g): local * sum(1 for d in range(3) if g < groups - d) for g in range(groups)},
          ("c", 5): local * (3 * groups - 3),
          **{("g", groups - d): local * (groups - d) for d in range(3)},
          **{("t", 1000 * (groups - d) + 7): 2 * local * (groups - d) for d in range(3)},
          **{("m", 100 * (groups - d) + local): local * (groups - d) for d in range(3)},
          **{("x", groups - d): local * (groups - d) - 1 for d in range(3)}},
         "repeating keys and cached launch-uniform slots over 3 grid sizes"),
        # An if/else around keyed maps, and a predicate on last_thread: LLVM's SPIR-V back end
        # alone structurized both wrongly (the layer refused the modules).
        ("gpu:kretprobe:main { if (tid % 2 == 0) { @a[tid % 5] = count(); } else "
         "{ @b[tid % 3] = count(); } }", [str(n)],
         {**{("a", k): len(range(k if k % 2 == 0 else k + 5, invocations, 10)) for k in range(5)},
          **{("b", k): len(range(k if k % 2 == 1 else k + 3, invocations, 6)) for k in range(3)}},
         "if/else around keyed maps"),
        # A keyed map read in the probe: the slot search's three-way branch on the slot state
        # became a switch that StructurizeCFG (without lower-switch first) turned into "never
        # found": @d read 2 (the READY state word) instead of 7.
        ("gpu:kprobe:main / tid == 0 / { @c[1] = 7; @d[1] = @c[1]; @e[2] = @c[1] + 1; "
         "@z = @c[3]; }", [str(n)],
         {("c", 1): 7, ("d", 1): 7, ("e", 2): 8, ("z", None): 0}, "keyed map reads"),
        # Loops and records (issue 29): plain loops in the shader, structurized for SPIR-V. A
        # range loop's bounds per invocation (empty where start >= end); continue and break.
        ("gpu:kretprobe:main { for $i : tid % 3 .. 2 { @f[tid % 3] = count(); @s = sum($i); } }",
         [str(n)],
         {("f", 0): 2 * len(range(0, invocations, 3)), ("f", 1): len(range(1, invocations, 3)),
          ("s", None): len(range(0, invocations, 3)) + len(range(1, invocations, 3))},
         "range for loops with bounds per invocation"),
        ("gpu:kretprobe:main { $j = 0; while ($j < 10) { $j++; if ($j == 2) { continue; } "
         "if ($j == tid % 4 + 3) { break; } @w[tid % 4] = count(); } }", [str(n)],
         {("w", k): (k + 1) * len(range(k, invocations, 4)) for k in range(4)},
         "while with continue and break"),
        ("gpu:kretprobe:main { $r = (a = tid % 2, b = bid_x); @r[$r.a] = sum($r.b); }",
         [str(n)],
         {("r", k): sum(t // local for t in range(k, invocations, 2)) for k in range(2)},
         "records"),
        ("gpu:kretprobe:main / last_thread / { @c = count(); }", [str(n), "3"],
         {("c", None): 3}, "last_thread: once per dispatch"),
        ("gpu:kretprobe:main { @l[lane] = count(); @w[warp] = count(); }", [str(n)],
         subgroup_counts(invocations, local), "lane and warp: the device's subgroups"),
    ]
    failed = 0
    dump = tempfile.mkdtemp(prefix="gpubt-vk-dump-")
    env["GPUBT_VULKAN_DUMP"] = dump  # the layer writes every module it linked: spirv-val below
    for script, pargs, want, name in cases:
        r = run([args.gpubt, "-e", script, "-c", " ".join([prog] + pargs)], env)
        out = r.stdout + r.stderr
        got = map_rows(r.stdout)
        right = want(got) if callable(want) else got == want
        ok = r.returncode == 0 and right and f"vk_vector_add: ok {n}" in out
        print(f"[{'PASS' if ok else 'FAIL'}] {name}: {script}")
        if not ok:
            failed += 1
            expected = {} if callable(want) else want
            extra = {k: v for k, v in got.items() if expected.get(k) != v}
            missing = [k for k in expected if k not in got]
            print(f"  exit {r.returncode}; {len(got)} rows, wrong {list(extra.items())[:5]}, "
                  f"missing {missing[:5]}\n  stderr: {r.stderr[-2000:]}")
    # Every module the layer made validates (the program's SPIR-V 1.0 on Vulkan 1.2 rules).
    linked = sorted(os.listdir(dump))
    if shutil.which("spirv-val"):
        bad = [f for f in linked if subprocess.run(
            ["spirv-val", "--target-env", "vulkan1.2", os.path.join(dump, f)]).returncode != 0]
        ok = linked and not bad
        print(f"[{'PASS' if ok else 'FAIL'}] spirv-val on {len(linked)} linked modules {bad}")
        failed += not ok
    shutil.rmtree(dump, ignore_errors=True)
    env.pop("GPUBT_VULKAN_DUMP")
    # printf from every invocation: one line each (a compare-exchange reservation loop gave
    # lanes of one lavapipe subgroup one record), in both dispatches.
    r = run([args.gpubt, "-e", 'gpu:kretprobe:main { printf("p %d %d\\n", tid, bid_x); }',
             "-c", f"{prog} {n} 2"], env)
    lines = sorted(re.findall(r"^p (\d+) (\d+)$", r.stdout, re.M))
    want = sorted([(str(t), str(t // local)) for t in range(invocations)] * 2)
    ok = r.returncode == 0 and lines == want and f"vk_vector_add: ok {n}" in r.stdout + r.stderr
    print(f"[{'PASS' if ok else 'FAIL'}] printf from every invocation, 2 dispatches")
    if not ok:
        print(f"  exit {r.returncode}; {len(lines)} lines of {len(want)}, "
              f"{len(set(lines))} distinct\n  {r.stderr[-1000:]}")
    failed += not ok
    failed += check_clocks(args.gpubt, prog, n, invocations, env)
    failed += check_clocks_under_load(args.gpubt, prog, n, invocations, env)
    failed += check_clock_after_wrap(args.gpubt, prog, n, env)
    failed += check_keyless_updates(args.gpubt, prog, n, invocations, env)
    failed += check_debug_names(args.gpubt, prog, n, invocations, env)
    failed += check_killed(args.gpubt, prog, n, invocations, env)
    failed += check_kerneltime(args.gpubt, prog, n, env)
    failed += check_topkernels(args.gpubt, prog, n, env)
    failed += check_host_reads(args.gpubt, prog, n, invocations, env)
    failed += check_timeline(args.gpubt, prog, n, env)
    failed += check_gpu_to_host_map(args.gpubt, prog, n, env)
    failed += check_entry_points(args.gpubt, prog, n, invocations, env)
    failed += check_many_pipelines(args.gpubt, prog, env)
    failed += check_listing(args.gpubt, prog, n, env)
    failed += check_blocks(args.gpubt, prog, groups, local, env)
    failed += check_active_lanes(args.gpubt, prog, groups, local, env)
    # --gpu-backend is CUDA's: the Vulkan layer does not use it, and gpubt says so (it was
    # ignored silently); the shader is traced as without it.
    r = run([args.gpubt, "--gpu-backend=ptx", "-e", "gpu:kprobe:main { @ = count(); }", "-c", prog],
            env)
    ok = (r.returncode == 0 and "--gpu-backend=ptx is for CUDA kernels" in r.stderr
          and map_rows(r.stdout).get(("", None)) == invocations)
    failed += report(ok, "--gpu-backend is a warning for Vulkan", r)
    # A shader no probe matches runs as built, and gpubt says no launch matched.
    r = run([args.gpubt, "-e", "gpu:kprobe:nosuch { @ = count(); }", "-c", prog], env)
    ok = "vk_vector_add: ok" in r.stdout + r.stderr and "no kernel launch matched" in r.stderr
    print(f"[{'PASS' if ok else 'FAIL'}] unmatched probe leaves the shader alone")
    failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
