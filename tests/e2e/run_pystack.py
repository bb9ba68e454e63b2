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
    lib = os.path.join(ctx.programs, "libpymark.so")
    with tempfile.TemporaryDirectory() as tmp:
        truth = os.path.join(tmp, "traceback.json")
        prog = (f"uprobe:{lib}:gpubt_py_mark {{ printf(\"mark %d%s\\n\", arg0, pystack); "
                f"@[arg0, pystack] = count(); }}")
        cmd = f"{python} {os.path.join(HERE, 'pystack', 'calls.py')} {lib} {truth}"
        r = subprocess.run([ctx.gpubt, "-e", prog, "-c", cmd], capture_output=True, text=True,
                           errors="replace", stdin=subprocess.DEVNULL, timeout=60)
        assert r.returncode == 0, (r.returncode, r.stderr)
        assert "WARNING" not in r.stderr, r.stderr
        expected = expected_stacks(truth)
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
    found = [p for p in pythons() if version(p) >= (3, 11)]
    if not found:
        return "SKIP"
    for python in found:
        check_python(ctx, python)


@case
def pystack_module_frames_named_after_the_module_ran(ctx):
    """Map keys only, nothing printed live: the first time gpubt names the frames is at the end,
    after CPython freed the main module's code object (it does as soon as the module has run).
    The <module> frames must still print as file:line <module>, never as ??."""
    found = [p for p in pythons() if version(p) >= (3, 11)]
    if not found:
        return "SKIP"
    lib = os.path.join(ctx.programs, "libpymark.so")
    prog = f"uprobe:{lib}:gpubt_py_mark {{ @[arg0, pystack] = count(); }}"
    for python in found:
        with tempfile.TemporaryDirectory() as tmp:
            truth = os.path.join(tmp, "traceback.json")
            cmd = f"{python} {os.path.join(HERE, 'pystack', 'calls.py')} {lib} {truth}"
            r = subprocess.run([ctx.gpubt, "-e", prog, "-c", cmd], capture_output=True,
                               text=True, errors="replace", stdin=subprocess.DEVNULL, timeout=60)
            assert r.returncode == 0, (r.returncode, r.stderr)
            expected = expected_stacks(truth)
        keys = stacks(r.stdout, r"^@\[(\d+), $")
        for i, want in expected.items():
            assert keys.get(i) == want, f"{python} call {i}, map key:\n{keys.get(i)}\nwant\n{want}"


@case
def pystack_older_python_warns(ctx):
    """A real CPython older than 3.11 (pyenv's, where installed): the warning, no frames."""
    old = [p for p in pythons() if version(p) < (3, 11)]
    if not old:
        return "SKIP"
    lib = os.path.join(ctx.programs, "libpymark.so")
    prog = f"uprobe:{lib}:gpubt_py_mark {{ @[pystack] = count(); }}"
    for python in old:
        with tempfile.TemporaryDirectory() as tmp:
            cmd = f"{python} {os.path.join(HERE, 'pystack', 'calls.py')} {lib} {tmp}/t.json"
            r = subprocess.run([ctx.gpubt, "-e", prog, "-c", cmd], capture_output=True,
                               text=True, errors="replace", stdin=subprocess.DEVNULL, timeout=60)
        assert r.returncode == 0, (r.returncode, r.stderr)
        warnings = [l for l in r.stderr.splitlines() if l.startswith("WARNING: pystack:")]
        assert len(warnings) == 1 and "pystack reads 3.11 to 3.13" in warnings[0], r.stderr
        assert "@[\n]: 9" in r.stdout, r.stdout


@case
def pystack_unreadable_interpreter_warns_once(ctx):
    fake = os.path.join(ctx.programs, "python3.10-fake")
    prog = ("uprobe:" + os.path.join(ctx.programs, "libpymark.so") +
            ":gpubt_py_mark { printf(\"py[%s] native%s\\n\", pystack, ustack); "
            "@[pystack] = count(); }")
    r = subprocess.run([ctx.gpubt, "-e", prog, "-c", fake], capture_output=True, text=True,
                       errors="replace", stdin=subprocess.DEVNULL, timeout=60)
    assert r.returncode == 0, (r.returncode, r.stderr)
    warnings = [l for l in r.stderr.splitlines() if l.startswith("WARNING: pystack:")]
    assert warnings == [f"WARNING: pystack: {os.path.realpath(fake)} is CPython 3.10: pystack reads 3.11 to 3.13; "
                        "Python frames are left out"], r.stderr
    assert "py[\n] native\n" in r.stdout, r.stdout  # an empty Python stack
    native = stacks(r.stdout.replace("py[\n] native", "native 0"), r"^native (\d+)$")[0]
    assert native and native[0] == "gpubt_py_mark" and "main" in native, native
    assert "@[\n]: 1" in r.stdout, r.stdout


if __name__ == "__main__":
    sys.exit(run_main("--programs"))
