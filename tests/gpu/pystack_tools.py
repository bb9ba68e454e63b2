#!/usr/bin/env python3
"""Issue 30's Python tools on the GPU: tools/pymemleak.bt, tools/pyallocchurn.bt and
tools/pylaunches.bt over ml/pystack_tools_step.py, a PyTorch script that keeps 3 tensors, makes
and drops 5, forces a cudaMalloc of 256 MiB and launches 4 elementwise kernels at known lines,
printing its own traceback there. The tools' Python stacks must end in exactly those frames
(PyTorch's own Python frames may sit inside them): @tensors counts the kept tensors at their
line, @tensor_pairs the dropped ones at theirs, @live_bytes at least 256 MiB at the cudaMalloc's
line, @launches at least the launches at theirs. This is also the check that the wheel's
libc10_cuda.so has the caching allocator's symbols (NativeCachingAllocator::allocate,
local_raw_delete): a "no function matches" warning fails it.
usage: pystack_tools.py --gpubt PATH [--python python3] [--fake LIBCUDART LIBC10]
--fake runs the same script without torch through stand-in libraries (tests/programs), so that
this judge runs on a machine without a GPU (ctest pystack)."""
import argparse, json, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MALLOC_BYTES = 256 << 20
# (tool, map, truth kind, what each call adds to the map at its line at least)
CHECKS = (('pymemleak.bt', 'tensors', 'kept_tensor', 1),
          ('pyallocchurn.bt', 'tensor_pairs', 'churn_tensor', 1),
          ('pymemleak.bt', 'live_bytes', 'kept_malloc', MALLOC_BYTES),
          ('pylaunches.bt', 'launches', 'launch', 1))
TOOLS = ('pymemleak.bt', 'pyallocchurn.bt', 'pylaunches.bt')


def stack_maps(out):
    """{map name: {(frame lines innermost first): value}} of maps keyed by a pystack, after
    other key fields or not ('@name[kernel, \\n    frame\\n]: N'); fields summed over."""
    found = {}
    for m in re.finditer(r'^@(\w+)\[.*?\n((?:    .*\n)*)\]: (-?\d+)$', out, re.M):
        frames = tuple(l[4:] for l in m.group(2).splitlines())
        entries = found.setdefault(m.group(1), {})
        entries[frames] = entries.get(frames, 0) + int(m.group(3))
    return found


def truth_of(out):
    m = re.search(r'^truth (.*)$', out, re.M)
    if not m:
        return None
    return {kind: [tuple(f'{f}:{line} {fn}' for f, line, fn in reversed(stack)) for stack in v]
            for kind, v in json.loads(m.group(1)).items()}


def at_least(maps, name, lines, want):
    """Whether the values of NAME's stacks that end in LINES add up to WANT or more."""
    got = sum(v for frames, v in maps.get(name, {}).items()
              if frames[len(frames) - len(lines):] == lines)
    return got >= want, f'{name}: {got} at {lines[0]} (want >= {want})'


def judge(outs):
    """(ok, detail) for the tools' outputs, {tool: its output} (each ends with the script's
    truth line)."""
    checks = []
    for tool, name, kind, each in CHECKS:
        truth = truth_of(outs[tool])
        if not truth:
            return False, f'{tool}: the script printed no truth line'
        for lines in set(truth[kind]):
            checks.append(at_least(stack_maps(outs[tool]), name, lines,
                                   truth[kind].count(lines) * each))
    bad = [d for ok, d in checks if not ok]
    return not bad, '; '.join(bad or [d for _, d in checks])


# --fake has no driver; on the GPU PyTorch loads it.
NO_DRIVER = 'WARNING: cuda: the traced program never loaded libcuda.so; probes on it did not fire'


def run_tool(gpubt, tool, cmd, env, timeout, fake):
    p = subprocess.run([os.path.abspath(gpubt), '-c', cmd, os.path.join(ROOT, 'tools', tool)],
                       capture_output=True, text=True, errors='replace', stdin=subprocess.DEVNULL,
                       timeout=timeout, cwd=os.path.join(HERE, 'ml'), env=env)
    if p.returncode != 0:
        return None, f'{tool}: exit {p.returncode}: {p.stderr[-600:]}'
    warnings = [l for l in p.stderr.splitlines()
                if 'WARNING' in l and not (fake and l == NO_DRIVER)]
    if warnings:  # no pystack, libc10_cuda.so without the allocator's symbols
        return None, f'{tool}: ' + '\n'.join(warnings)[-600:]
    return p.stdout, ''


def run(gpubt, python, fake=None, env=None, timeout=240):
    cmd = f'{python} {os.path.join(HERE, "ml", "pystack_tools_step.py")}'
    if fake:
        cmd += f' --fake {fake[0]} {fake[1]}'
    outs = {}
    for tool in TOOLS:
        out, why = run_tool(gpubt, tool, cmd, env, timeout, fake)
        if out is None:
            return False, why
        outs[tool] = out
    return judge(outs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--gpubt', required=True)
    ap.add_argument('--python', default='python3')
    ap.add_argument('--fake', nargs=2)
    a = ap.parse_args()
    ok, detail = run(a.gpubt, a.python, a.fake, dict(os.environ, PYTHONUNBUFFERED='1'))
    print(f'[{"PASS" if ok else "FAIL"}] pystack tools: {detail}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
