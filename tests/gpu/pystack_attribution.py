#!/usr/bin/env python3
"""Issue 30 on the GPU: the PyTorch step of ml/pystack_step.py makes its cudaStreamSynchronize
(loss.item()), cudaDeviceSynchronize (torch.cuda.synchronize()) and cudaMalloc (a new block after
empty_cache()) calls at known lines and prints what its own traceback module says the stack was
at each; gpubt's pystack at those cudart functions must end in exactly those frames (the
script's frames outermost, PyTorch's own Python frames may sit inside them).
usage: pystack_attribution.py --gpubt PATH [--python python3] [--fake LIBPYMARK]
--fake runs the same script without torch (ctypes calls to libpymark's gpubt_py_mark stand in
for the three calls), so that this judge runs on a machine without a GPU (ctest pystack)."""
import argparse, json, os, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = {1: 'stream_sync', 2: 'device_sync', 3: 'malloc'}
GPU_SCRIPT = ('uprobe:cudart:cudaStreamSynchronize { @[1, pystack] = count(); } '
              'uprobe:cudart:cudaDeviceSynchronize { @[2, pystack] = count(); } '
              'uprobe:cudart:cudaMalloc { @[3, pystack] = count(); }')
FAKE_SCRIPT = 'uprobe:{lib}:gpubt_py_mark {{ @[arg0, pystack] = count(); }}'


def keyed_stacks(out):
    """{(kind number, (frame lines innermost first)): count} of '@[N, \\n    frame\\n]: C' keys."""
    found = {}
    for m in re.finditer(r'^@\[(\d+), \n((?:    .*\n)*)\]: (\d+)$', out, re.M):
        frames = tuple(l[4:] for l in m.group(2).splitlines())
        found[(int(m.group(1)), frames)] = found.get((int(m.group(1)), frames), 0) + int(m.group(3))
    return found


def judge(out):
    """(ok, detail): each truth stack is the outermost part of a pystack of its kind, and the
    calls of each stack are counted at least as often as the script made them."""
    m = re.search(r'^truth (.*)$', out, re.M)
    if not m:
        return False, 'the script printed no truth line'
    truth = json.loads(m.group(1))
    found = keyed_stacks(out)
    details = []
    for number, kind in KINDS.items():
        want = {}
        for stack in truth[kind]:
            lines = tuple(f'{f}:{line} {fn}' for f, line, fn in reversed(stack))
            want[lines] = want.get(lines, 0) + 1
        for lines, times in want.items():
            got = sum(c for (k, frames), c in found.items()
                      if k == number and frames[len(frames) - len(lines):] == lines)
            if got < times:
                near = [frames for (k, frames) in found if k == number]
                return False, f'{kind}: {times} calls at\n  ' + '\n  '.join(lines) + \
                    f'\nbut {got} pystacks end so; {kind} stacks seen: {near}'
            details.append(f'{kind} x{times} at {lines[0]}')
    return True, '; '.join(details)


def run(gpubt, python, fake=None, env=None, timeout=240):
    script = FAKE_SCRIPT.format(lib=fake) if fake else GPU_SCRIPT
    cmd = f'{python} {os.path.join(HERE, "ml", "pystack_step.py")}' + (f' --fake {fake}' if fake else '')
    p = subprocess.run([os.path.abspath(gpubt), '-e', script, '-c', cmd], capture_output=True, text=True,
                       errors='replace', stdin=subprocess.DEVNULL, timeout=timeout,
                       cwd=os.path.join(HERE, 'ml'), env=env)
    if p.returncode != 0:
        return False, f'exit {p.returncode}: {p.stderr[-600:]}'
    if 'WARNING: pystack' in p.stderr:
        return False, p.stderr[-600:]
    return judge(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--gpubt', required=True)
    ap.add_argument('--python', default='python3')
    ap.add_argument('--fake')
    a = ap.parse_args()
    ok, detail = run(a.gpubt, a.python, a.fake, dict(os.environ, PYTHONUNBUFFERED='1'))
    print(f'[{"PASS" if ok else "FAIL"}] pystack attribution: {detail}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
