#!/usr/bin/env python3
"""Issue 30's allocation tools on the GPU: tools/pymemleak.bt and tools/pyallocchurn.bt over
ml/pystack_allocs_step.py, a PyTorch script that keeps 3 tensors, makes and drops 5, and forces a
cudaMalloc of 256 MiB at known lines, printing its own traceback there. The tools' Python stacks
must end in exactly those frames (PyTorch's own Python frames may sit inside them): @tensors
counts the kept tensors at their line, @tensor_pairs the dropped ones at theirs, @live_bytes at
least 256 MiB at the cudaMalloc's line. This is also the check that the wheel's libc10_cuda.so
has the caching allocator's symbols (NativeCachingAllocator::allocate, local_raw_delete): a
"no function matches" warning fails it.
usage: pystack_allocs.py --gpubt PATH [--python python3] [--fake LIBCUDART LIBC10]
--fake runs the same script without torch through stand-in libraries (tests/programs), so that
this judge runs on a machine without a GPU (ctest pystack)."""
import argparse, json, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MALLOC_BYTES = 256 << 20


def stack_maps(out):
    """{map name: {(frame lines innermost first): value}} of '@name[\\n    frame\\n]: N' maps."""
    found = {}
    for m in re.finditer(r'^@(\w+)\[\n((?:    .*\n)*)\]: (-?\d+)$', out, re.M):
        frames = tuple(l[4:] for l in m.group(2).splitlines())
        found.setdefault(m.group(1), {})[frames] = int(m.group(3))
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


def judge(leak_out, churn_out):
    """(ok, detail) for the two tools' outputs (each ends with the script's truth line)."""
    truth, leak, churn = truth_of(leak_out), stack_maps(leak_out), stack_maps(churn_out)
    if not truth or not truth_of(churn_out):
        return False, 'the script printed no truth line'
    checks = []
    for lines in set(truth['kept_tensor']):
        checks.append(at_least(leak, 'tensors', lines, truth['kept_tensor'].count(lines)))
    for lines in set(truth_of(churn_out)['churn_tensor']):
        checks.append(at_least(churn, 'tensor_pairs', lines,
                               truth_of(churn_out)['churn_tensor'].count(lines)))
    for lines in set(truth['kept_malloc']):
        checks.append(at_least(leak, 'live_bytes', lines, MALLOC_BYTES))
    bad = [d for ok, d in checks if not ok]
    return not bad, '; '.join(bad or [d for _, d in checks])


def run_tool(gpubt, tool, cmd, env, timeout):
    p = subprocess.run([os.path.abspath(gpubt), '-c', cmd, os.path.join(ROOT, 'tools', tool)],
                       capture_output=True, text=True, errors='replace', stdin=subprocess.DEVNULL,
                       timeout=timeout, cwd=os.path.join(HERE, 'ml'), env=env)
    if p.returncode != 0:
        return None, f'{tool}: exit {p.returncode}: {p.stderr[-600:]}'
    if 'WARNING' in p.stderr:  # no pystack, or libc10_cuda.so without the allocator's symbols
        return None, f'{tool}: {p.stderr[-600:]}'
    return p.stdout, ''


def run(gpubt, python, fake=None, env=None, timeout=240):
    cmd = f'{python} {os.path.join(HERE, "ml", "pystack_allocs_step.py")}'
    if fake:
        cmd += f' --fake {fake[0]} {fake[1]}'
    outs = []
    for tool in ('pymemleak.bt', 'pyallocchurn.bt'):
        out, why = run_tool(gpubt, tool, cmd, env, timeout)
        if out is None:
            return False, why
        outs.append(out)
    return judge(*outs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--gpubt', required=True)
    ap.add_argument('--python', default='python3')
    ap.add_argument('--fake', nargs=2)
    a = ap.parse_args()
    ok, detail = run(a.gpubt, a.python, a.fake, dict(os.environ, PYTHONUNBUFFERED='1'))
    print(f'[{"PASS" if ok else "FAIL"}] pystack allocs: {detail}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
