#!/usr/bin/env python3
"""pystack end to end, for every CPython installed here: a Python program (pystack/calls.py)
calls a native function through ctypes along known paths and writes what its own traceback
module says the stack was at each call; gpubt's pystack at a uprobe on that function, printed
live (printf) and from a map key at the end (after the program exited), must give the same
frames, `file:line function` innermost first. Then a program that only looks like a CPython
pystack cannot read: one warning, native frames still there, Python frames empty."""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
from case_list import case, run_main

FRAMES = 31  # abi::kPyStackFrames


def pythons():
    """The CPython interpreters installed, one per real file."""
    found = {}
    pyenv = os.path.join(os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv")),
                         "versions", "*", "bin", "python3.*")
    for p in sorted(glob.glob("/usr/bin/python3.*") + glob.glob("/usr/local/bin/python3.*") +
                    glob.glob(pyenv)):
        if re.fullmatch(r"python3\.\d+", os.path.basename(p)) and os.access(p, os.X_OK):
            found.setdefault(os.path.realpath(p), p)
    return list(found.values())


def stacks(text, start):
    """{id: [frame lines]} of blocks that open with a line matching START (group 1: the id)
    followed by the frame lines, indented four spaces."""
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(start, line)
        if m:
            cur = out.setdefault(int(m.group(1)), [])
        elif cur is not None and line.startswith("    "):
            cur.append(line[4:])
        else:
            cur = None
    return out


def expected_stacks(truth):
    """calls.py's traceback file as {id: [frame lines]}, innermost first, as pystack holds them."""
    with open(truth, encoding="utf-8") as f:
        return {int(k): [f"{fn}:{line} {name}" for fn, line, name in reversed(v)][:FRAMES]
                for k, v in json.load(f).items()}


def check_python(ctx, python):
    prog = ('uprobe:LIB:gpubt_py_mark { printf("mark %d%s\\n", arg0, pystack); '
            '@[arg0, pystack] = count(); }')
    r, expected = run_calls(ctx, python, prog)
    live = stacks(r.stdout, r"^mark (\d+)$")
    keys = stacks(r.stdout, r"^@\[(\d+), $")
    assert sorted(expected) == list(range(1, 10)), sorted(expected)
    for i, want in expected.items():
        assert live.get(i) == want, f"{python} call {i}, printf:\n{live.get(i)}\nwant\n{want}"
        assert keys.get(i) == want, f"{python} call {i}, map key:\n{keys.get(i)}\nwant\n{want}"
    print(f"  {python}: {len(expected)} call paths match traceback.extract_stack()")


def version(python):
    r = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"],
                       capture_output=True, text=True, timeout=30)
    return tuple(int(x) for x in r.stdout.split())


@case
def pystack_matches_traceback(ctx):
    found = [p for p in pythons() if version(p) >= (3, 10)]
    if not found:
        return "SKIP"
    for python in found:
        check_python(ctx, python)


@case
def pystack_module_frames_named_after_the_module_ran(ctx):
    """Map keys only, nothing printed live: the first time gpubt names the frames is at the end,
    after CPython freed the main module's code object (it does as soon as the module has run).
    The <module> frames must still print as file:line <module>, never as ??."""
    found = [p for p in pythons() if version(p) >= (3, 10)]
    if not found:
        return "SKIP"
    for python in found:
        r, expected = run_calls(ctx, python,
                                "uprobe:LIB:gpubt_py_mark { @[arg0, pystack] = count(); }")
        keys = stacks(r.stdout, r"^@\[(\d+), $")
        for i, want in expected.items():
            assert keys.get(i) == want, f"{python} call {i}, map key:\n{keys.get(i)}\nwant\n{want}"


def run_calls(ctx, python, prog, *options, warnings=False):
    """gpubt running PROG (LIB: libpymark.so) over calls.py under PYTHON, which must exit 0 (and
    warn nothing unless WARNINGS): (the finished process, expected stacks by call id)."""
    lib = os.path.join(ctx.programs, "libpymark.so")
    with tempfile.TemporaryDirectory() as tmp:
        truth = os.path.join(tmp, "traceback.json")
        cmd = f"{python} {os.path.join(HERE, 'pystack', 'calls.py')} {lib} {truth}"
        r = subprocess.run([ctx.gpubt, *options, "-e", prog.replace("LIB", lib), "-c", cmd],
                           capture_output=True, text=True, errors="replace",
                           stdin=subprocess.DEVNULL, timeout=60)
        assert r.returncode == 0, (r.returncode, r.stderr)
        assert warnings or "WARNING" not in r.stderr, r.stderr
        return r, expected_stacks(truth)


def is_python_line(line):
    return re.fullmatch(r".+\.py:-?\d+ .+", line) is not None


@case
def pystack_limit_and_ustack_py_mode(ctx):
    """pystack(3) is the 3 innermost frames (a map key); ustack(py) is the native frames with
    the Python ones in place of the eval loop's, after them here: CPython and libffi are built
    without frame pointers, so the kernel's unwinding stops in ctypes (the splice itself:
    runtime_tests PythonFrames)."""
    found = [p for p in pythons() if version(p) >= (3, 10)]
    if not found:
        return "SKIP"
    prog = ("uprobe:LIB:gpubt_py_mark { printf(\"mark %d%s\\n\", arg0, ustack(py)); "
            "printf(\"native %d%s\\n\", arg0, ustack(16)); @[arg0, pystack(3)] = count(); }")
    for python in found:
        r, expected = run_calls(ctx, python, prog)
        out = r.stdout
        mixed, native = stacks(out, r"^mark (\d+)$"), stacks(out, r"^native (\d+)$")
        keys = stacks(out, r"^@\[(\d+), $")
        for i, want in expected.items():
            got = mixed.get(i, [])
            n = next((k for k, line in enumerate(got) if is_python_line(line)), len(got))
            assert got[:n] == native[i] and got[0] == "gpubt_py_mark", (python, i, got, native[i])
            assert got[n:] == want[:23], f"{python} call {i} ustack(py):\n{got}\nwant\n{want}"
        for i in (1, 2, 3, 9):  # Python calls all the way: no 3.12+ shim among the first 3
            assert keys.get(i) == expected[i][:3], (python, i, keys.get(i), expected[i][:3])
        print(f"  {python}: ustack(py) and pystack(3) match traceback.extract_stack()")


@case
def pystack_in_json_and_timeline_spans(ctx):
    """-f json carries a pystack as its text; --timeline gives a probed function's span the
    Python stack of its caller when its entry probe takes pystack."""
    found = [p for p in pythons() if version(p) >= (3, 10)]
    if not found:
        return "SKIP"
    python = found[0]
    prog = "uprobe:LIB:gpubt_py_mark { printf(\"mark %d%s\\n\", arg0, pystack); }"
    r, expected = run_calls(ctx, python, prog, "-f", "json")
    out = r.stdout
    lines = [json.loads(l) for l in out.splitlines() if l.strip()]
    printed = [l["data"] for l in lines if l["type"] == "printf"]
    assert len(printed) == 9, printed
    for text in printed:
        i = int(text.split()[1])
        assert text == f"mark {i}\n" + "".join(f"    {f}\n" for f in expected[i]) + "\n", text
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        prog = "uprobe:LIB:gpubt_py_mark { @s[pystack] = count(); } uretprobe:LIB:gpubt_py_mark { }"
        _, expected = run_calls(ctx, python, prog, "--timeline", trace)
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
    # A span's args are on the instant right after it (speedscope would make a frame of each).
    spans = [(e, events[i + 1]["args"]) for i, e in enumerate(events)
             if e.get("ph") == "X" and e.get("name") == "gpubt_py_mark"]
    assert len(spans) == 9, spans
    by_id = {args["retval"]: args["pystack"].split("\n") for _, args in spans}
    assert by_id == expected, (by_id, expected)


@case
def gpu_suite_attribution_judge(ctx):
    """tests/gpu/pystack_attribution.py's non-GPU half: its step script in --fake mode (ctypes
    calls at the lines torch's syncs and cudaMalloc take on the GPU) passes its judge under
    every CPython here, and the judge fails when a frame's line is off by one."""
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "gpu"))
    import pystack_attribution as pa
    found = [p for p in pythons() if version(p) >= (3, 10)]
    if not found:
        return "SKIP"
    lib = os.path.abspath(os.path.join(ctx.programs, "libpymark.so"))
    for python in found:
        ok, detail = pa.run(ctx.gpubt, python, fake=lib, timeout=60)
        assert ok, (python, detail)
    out = ("@[1, \n    a.py:5 f\n    a.py:9 <module>\n]: 1\n"
           'truth {"stream_sync": [[["a.py", 9, "<module>"], ["a.py", 5, "f"]]], '
           '"device_sync": [], "malloc": []}\n')
    assert pa.judge(out)[0], pa.judge(out)
    assert not pa.judge(out.replace("a.py:5 f", "a.py:6 f"))[0]


@case
def pystack_with_p_names_what_ran_before_the_process_ended(ctx):
    """-p, a process that ends before the maps print: its main module's code object (freed once
    the module has run) is read when gpubt attaches, and the functions' when the interpreter
    finalizes (gpubt holds it there), so both print as traceback says; a function freed while
    the process ran prints as ?? (its code object's memory, read late, would name another
    object: a freed object's reference count is pymalloc's free list link, and is refused)."""
    found = [p for p in pythons() if version(p) >= (3, 10)]
    if not found:
        return "SKIP"
    lib = os.path.join(ctx.programs, "libpymark.so")
    prog = f"uprobe:{lib}:gpubt_py_mark {{ @[arg0, pystack] = count(); }}"
    for python in found:
        with tempfile.TemporaryDirectory() as tmp:
            go, truth = os.path.join(tmp, "go"), os.path.join(tmp, "truth.json")
            target = subprocess.Popen([python, os.path.join(HERE, "pystack", "freed.py"), lib, go,
                                       truth], stdin=subprocess.DEVNULL)
            tracer = subprocess.Popen([ctx.gpubt, "-p", str(target.pid), "-e", prog],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                      errors="replace", stdin=subprocess.DEVNULL)
            try:
                first = tracer.stdout.readline()  # printed once attached
                assert first.startswith("Attaching"), first
                open(go, "w").close()
                assert target.wait(timeout=60) == 0
                out, err = tracer.communicate(timeout=60)
            finally:
                for p in (target, tracer):
                    if p.poll() is None:
                        p.kill()
                        p.wait()
            assert tracer.returncode == 0, (tracer.returncode, err)
            assert "WARNING" not in err, err
            want = expected_stacks(truth)
        keys = stacks(out, r"^@\[(\d+), $")
        assert keys.get(2) == want[2], f"{python} kept():\n{keys.get(2)}\nwant\n{want[2]}"
        got = keys.get(1, [])
        assert len(got) == 2 and re.fullmatch(r"\?\? \(code object 0x[0-9a-f]+\)", got[0]) \
            and got[1] == want[1][1], f"{python} gone():\n{got}\nwant ??, then\n{want[1][1]}"


@case
def pystack_with_a_subinterpreter(ctx):
    """A process with a subinterpreter: the main interpreter's calls (before, after) and the
    subinterpreter's (its code run on the main thread) all match their traceback. Before, once
    a subinterpreter existed only its threads were searched (interpreters.head is the newest):
    the main one's stacks were empty."""
    found = [p for p in pythons() if version(p) >= (3, 10)]
    if not found:
        return "SKIP"
    lib = os.path.join(ctx.programs, "libpymark.so")
    prog = f'uprobe:{lib}:gpubt_py_mark {{ printf("mark %d%s\\n", arg0, pystack); }}'
    for python in found:
        with tempfile.TemporaryDirectory() as tmp:
            truth = os.path.join(tmp, "truth")
            cmd = f"{python} {os.path.join(HERE, 'pystack', 'subinterp.py')} {lib} {truth}"
            r = subprocess.run([ctx.gpubt, "-e", prog, "-c", cmd], capture_output=True,
                               text=True, errors="replace", stdin=subprocess.DEVNULL, timeout=60)
            assert r.returncode == 0 and "WARNING" not in r.stderr, (r.returncode, r.stderr)
            with open(truth, encoding="utf-8") as f:
                want = {int(k): [f"{fn}:{line} {name}" for fn, line, name in reversed(v)]
                        for line in f for k, v in json.loads(line).items()}
        live = stacks(r.stdout, r"^mark (\d+)$")
        assert sorted(want) == [1, 2, 3, 4], want
        for i, stack in want.items():
            assert live.get(i) == stack, f"{python} call {i}:\n{live.get(i)}\nwant\n{stack}"


def stack_maps(text):
    """{map name: {(key fields before the stack, (frame lines)): value}} of the maps printed
    with a pystack as the last part of their key: '@name[a, b, \n    frame\n]: N'."""
    out = {}
    for m in re.finditer(r"^@(\w+)\[(.*?)\n((?:    .*\n)*)\]: (-?\d+)$", text, re.M):
        fields = tuple(f for f in m.group(2).split(", ") if f)
        frames = tuple(line[4:] for line in m.group(3).splitlines())
        out.setdefault(m.group(1), {})[(fields, frames)] = int(m.group(4))
    return out


def run_allocs(ctx, python, tool, cudart):
    """TOOL (a tools/ file) over pystack/allocs.py under PYTHON with CUDART through ctypes and
    the stand-in libc10_cuda.so: (stack_maps of its output, {kind: Counter of truth stacks})."""
    from collections import Counter
    c10 = os.path.join(ctx.programs, "fake-torch", "libc10_cuda.so")
    with tempfile.TemporaryDirectory() as tmp:
        truth = os.path.join(tmp, "truth.json")
        cmd = f"{python} {os.path.join(HERE, 'pystack', 'allocs.py')} {cudart} {c10} {truth}"
        tool = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools", tool)
        r = subprocess.run([ctx.gpubt, "-c", cmd, tool], capture_output=True, text=True,
                           errors="replace", stdin=subprocess.DEVNULL, timeout=60)
        assert r.returncode == 0, (r.returncode, r.stderr)
        assert "WARNING" not in r.stderr, r.stderr
        with open(truth, encoding="utf-8") as f:
            calls = json.load(f)
    want = {kind: Counter(tuple(f"{fn}:{line} {name}" for fn, line, name in reversed(stack))
                          for stack in stacks) for kind, stacks in calls.items()}
    return stack_maps(r.stdout), want


def by_stack(entries):
    return {frames: value for (_, frames), value in entries.items()}


@case
def pymemleak_by_python_line(ctx):
    """tools/pymemleak.bt: what is still allocated at exit, by the Python line that allocated
    it, against allocs.py's own traceback: two cudaMalloc'ed MiB kept by load_weights() (the
    three workspace() buffers freed), one 1000-byte tensor kept by each forward() call (its
    temporaries freed), through a stand-in libcudart and libc10_cuda.so loaded by ctypes after
    the start (the probes wait for the load)."""
    found = [p for p in pythons() if version(p) >= (3, 10)]
    lib = os.path.join(ctx.programs, "fake-cudart", "libcudart.so.13")
    if not found or not os.path.exists(lib):
        return "SKIP"
    for python in found:
        maps, want = run_allocs(ctx, python, "pymemleak.bt", lib)
        kept = {stack: n << 20 for stack, n in want["kept_malloc"].items()}
        assert by_stack(maps.get("live_bytes", {})) == kept, (python, maps, want)
        assert by_stack(maps.get("live_allocs", {})) == dict(want["kept_malloc"]), (python, maps)
        tensors = dict(want["kept_tensor"])
        assert len(tensors) == 2, want  # forward() called from two lines
        assert by_stack(maps.get("tensors", {})) == tensors, (python, maps, want)
        assert by_stack(maps.get("tensor_bytes", {})) == {s: 1000 for s in tensors}, (python, maps)
        assert "failed" not in maps, maps


@case
def pymemleak_failed_allocations_by_python_line(ctx):
    """The real libcudart without a GPU: every cudaMalloc fails, counted by call, error, size and
    Python stack; nothing is live."""
    found = [p for p in pythons() if version(p) >= (3, 10)]
    real = sorted(glob.glob("/usr/local/cuda/lib64/libcudart.so.*"))
    if not found or not real:
        return "SKIP"
    maps, want = run_allocs(ctx, found[0], "pymemleak.bt", real[0])
    prefix = ("uretprobe:cudart:cudaMalloc", "cudaErrorInsufficientDriver")
    failed = {(prefix + ("1048576",), s): n for s, n in want["kept_malloc"].items()}
    failed.update({(prefix + ("4194304",), s): n for s, n in want["churn_malloc"].items()})
    assert maps.get("failed") == failed, (maps, want)
    assert "live_bytes" not in maps, maps


@case
def pyallocchurn_by_python_line(ctx):
    """tools/pyallocchurn.bt: alloc/free pairs by the allocating Python line: workspace()'s three
    4 MiB cudaMalloc/cudaFree, forward()'s four 4096-byte temporaries per call; the kept
    allocations are no pairs."""
    found = [p for p in pythons() if version(p) >= (3, 10)]
    lib = os.path.join(ctx.programs, "fake-cudart", "libcudart.so.13")
    if not found or not os.path.exists(lib):
        return "SKIP"
    maps, want = run_allocs(ctx, found[0], "pyallocchurn.bt", lib)
    assert by_stack(maps.get("pairs", {})) == dict(want["churn_malloc"]), (maps, want)
    assert by_stack(maps.get("pair_bytes", {})) == {
        s: n * (4 << 20) for s, n in want["churn_malloc"].items()}, maps
    assert by_stack(maps.get("tensor_pairs", {})) == dict(want["churn_tensor"]), (maps, want)
    assert by_stack(maps.get("tensor_pair_bytes", {})) == {
        s: n * 4096 for s, n in want["churn_tensor"].items()}, maps


def run_launches(ctx, python, cudart, cuda):
    """tools/pylaunches.bt over pystack/launches.py: (stack_maps of its output, {(kernel,
    stack): launches} from the program's traceback)."""
    from collections import Counter
    pymark = os.path.join(ctx.programs, "libpymark.so")
    with tempfile.TemporaryDirectory() as tmp:
        truth = os.path.join(tmp, "truth.json")
        cmd = (f"{python} {os.path.join(HERE, 'pystack', 'launches.py')} {cudart} {cuda} "
               f"{pymark} {truth}")
        tool = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools", "pylaunches.bt")
        r = subprocess.run([ctx.gpubt, "-c", cmd, tool], capture_output=True, text=True,
                           errors="replace", stdin=subprocess.DEVNULL, timeout=60)
        assert r.returncode == 0, (r.returncode, r.stderr)
        warnings = [l for l in r.stderr.splitlines() if "WARNING" in l]
        if cuda == "none":  # what pylaunches says of a program that never loads the driver
            warnings.remove("WARNING: cuda: the traced program never loaded libcuda.so; "
                            "probes on it did not fire")
        assert not warnings, r.stderr
        with open(truth, encoding="utf-8") as f:
            calls = json.load(f)
    want = Counter(((kernel,), tuple(f"{fn}:{line} {name}" for fn, line, name in reversed(s)))
                   for kernel, stacks in calls.items() for s in stacks)
    return stack_maps(r.stdout), dict(want)


@case
def pylaunches_by_python_line(ctx):
    """tools/pylaunches.bt: launches by kernel and Python stack against launches.py's traceback:
    cudaLaunchKernel (a stand-in libcudart; kname() of the host stub) three times a step from
    layer(), cuLaunchKernel (a stand-in libcuda; kname() of a CUfunction looked up by name) once
    from loss(), over two steps called from two lines; each with the time spent in it."""
    found = [p for p in pythons() if version(p) >= (3, 10)]
    libs = [os.path.join(ctx.programs, *p)
            for p in (("fake-cudart", "libcudart.so.13"), ("fake-cuda", "libcuda.so.1"))]
    if not found or not all(os.path.exists(p) for p in libs):
        return "SKIP"
    for python in sorted({found[0], found[-1]}):  # pystack itself: the cases above
        maps, want = run_launches(ctx, python, *libs)
        assert len(want) == 4 and sum(want.values()) == 8, want
        assert maps.get("launches") == want, (python, maps, want)
        ns = maps.get("launch_ns", {})
        assert ns.keys() == want.keys() and all(v > 0 for v in ns.values()), (python, ns)


@case
def pylaunches_real_libcudart_without_a_gpu(ctx):
    """The real libcudart, no GPU: every cudaLaunchKernel fails, and is counted at its line."""
    found = [p for p in pythons() if version(p) >= (3, 10)]
    real = sorted(glob.glob("/usr/local/cuda/lib64/libcudart.so.*"))
    if not found or not real:
        return "SKIP"
    maps, want = run_launches(ctx, found[0], real[0], "none")
    assert sum(want.values()) == 6, want
    assert maps.get("launches") == want, (maps, want)


@case
def gpu_suite_tools_judge(ctx):
    """tests/gpu/pystack_tools.py's non-GPU half: its PyTorch script in --fake mode (the stand-in
    libcudart and libc10_cuda.so at the lines torch's allocations and launches take on the GPU)
    passes its judge, and the judge fails when a frame's line is off."""
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "gpu"))
    import pystack_tools as pt
    found = [p for p in pythons() if version(p) >= (3, 10)]
    fake = [os.path.abspath(os.path.join(ctx.programs, *p))
            for p in (("fake-cudart", "libcudart.so.13"), ("fake-torch", "libc10_cuda.so"))]
    if not found or not all(os.path.exists(p) for p in fake):
        return "SKIP"
    ok, detail = pt.run(ctx.gpubt, found[0], fake=fake, timeout=60)
    assert ok, detail
    truth = ('truth {"kept_tensor": [[["a.py", 9, "<module>"], ["a.py", 5, "load"]]], '
             '"churn_tensor": [], "kept_malloc": [], '
             '"launch": [[["a.py", 9, "<module>"], ["a.py", 7, "layer"]]]}\n')
    outs = {"pymemleak.bt": "@tensors[\n    a.py:5 load\n    a.py:9 <module>\n]: 1\n" + truth,
            "pyallocchurn.bt": truth,
            "pylaunches.bt": "@launches[k, \n    a.py:7 layer\n    a.py:9 <module>\n]: 1\n" + truth}
    assert pt.judge(outs)[0], pt.judge(outs)
    for tool, frame in (("pymemleak.bt", "a.py:5 load"), ("pylaunches.bt", "a.py:7 layer")):
        off = dict(outs, **{tool: outs[tool].replace(frame, frame.replace(":", ":1"))})
        assert not pt.judge(off)[0], tool


@case
def pystack_older_python_warns(ctx):
    """A real CPython older than 3.10 (pyenv's, where installed): the warning, no frames."""
    old = [p for p in pythons() if version(p) < (3, 10)]
    if not old:
        return "SKIP"
    for python in old:
        r, _ = run_calls(ctx, python, "uprobe:LIB:gpubt_py_mark { @[pystack] = count(); }",
                         warnings=True)
        warnings = [l for l in r.stderr.splitlines() if l.startswith("WARNING: pystack:")]
        assert len(warnings) == 1 and "pystack reads 3.10 to 3.13" in warnings[0], r.stderr
        assert "@[\n]: 9" in r.stdout, r.stdout


@case
def pystack_unreadable_interpreter_warns_once(ctx):
    fake = os.path.join(ctx.programs, "python3.9-fake")
    prog = ("uprobe:" + os.path.join(ctx.programs, "libpymark.so") +
            ":gpubt_py_mark { printf(\"py[%s] native%s\\n\", pystack, ustack); "
            "@[pystack] = count(); }")
    r = subprocess.run([ctx.gpubt, "-e", prog, "-c", fake], capture_output=True, text=True,
                       errors="replace", stdin=subprocess.DEVNULL, timeout=60)
    assert r.returncode == 0, (r.returncode, r.stderr)
    warnings = [l for l in r.stderr.splitlines() if l.startswith("WARNING: pystack:")]
    assert warnings == [f"WARNING: pystack: {os.path.realpath(fake)} is CPython 3.9: pystack reads 3.10 to 3.13; "
                        "Python frames are left out"], r.stderr
    assert "py[\n] native\n" in r.stdout, r.stdout  # an empty Python stack
    native = stacks(r.stdout.replace("py[\n] native", "native 0"), r"^native (\d+)$")[0]
    assert native and native[0] == "gpubt_py_mark" and "main" in native, native
    assert "@[\n]: 1" in r.stdout, r.stdout


if __name__ == "__main__":
    sys.exit(run_main("--programs"))
