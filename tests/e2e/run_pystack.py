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
    spans = [e for e in events if e.get("ph") == "X" and e.get("name") == "gpubt_py_mark"]
    assert len(spans) == 9, spans
    by_id = {e["args"]["retval"]: e["args"]["pystack"].split("\n") for e in spans}
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
