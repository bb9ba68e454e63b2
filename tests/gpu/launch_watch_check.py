"""The CUDA agent's launch watch alone (issue 26; runtime/cuda_agent/launch_watch.h), without gpubt:
the agent started with a config asking for it (watch, live 250 ms, an inherited socket), the
RunningLaunches records it sends decoded here independently of gpubt's reader
(runtime/abi/running_launches.cpp's layout): hang_kernel's stuck_kernel is reported, exact, with
its grid and block, within 3 s of its launch and until it ends; the short kernels before it,
finished, never are; the program's result is unchanged. Then the watch's cost per launch:
cupti_inflight's 20000 tiny launches plain, under the agent with no watch, and watched.
usage: launch_watch_check.py --bin DIR --agent PATH"""
import argparse
import re
import struct
import subprocess
import sys
import tempfile

from agent_socket import run_under_agent

RUNNING_LAUNCHES = 16  # runtime/abi/program_spec.h EventKind
ENTRY = struct.Struct('<QQQ3I3I6I')  # ..., exact, graph_kernels, name size, pad


def decode(p):
    pid, sent, count = struct.unpack_from('<QQQ', p, 0)
    pos, launches = 24, []
    for _ in range(count):
        f = ENTRY.unpack_from(p, pos)
        pos += ENTRY.size
        name = p[pos:pos + f[13]].decode(errors='replace')
        pos += f[13]
        launches.append({'seq': f[0], 'stream': f[1], 'since': f[2], 'grid': f[3:6],
                         'block': f[6:9], 'device': f[9], 'later': f[10], 'exact': f[11],
                         'graph': f[12], 'kernel': name})
    return {'pid': pid, 'sent': sent, 'launches': launches}


def watched(a, tmp, argv, watch=True):
    return run_under_agent(a.agent, tmp, argv, ['live\t250'] + (['watch\t1'] if watch else []),
                           RUNNING_LAUNCHES, decode)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--bin', required=True)
    ap.add_argument('--agent', required=True)
    a = ap.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        p, got = watched(a, tmp, [f'{a.bin}/hang_kernel', '4'])
        since = re.search(r'spinning since (\d+)', p.stdout)
        launch_ns = int(since.group(1)) if since else 0
        stuck = [(t, l) for t, r in got for l in r['launches'] if 'stuck_kernel' in l['kernel']]
        others = {l['kernel'] for _, r in got for l in r['launches']} - {l['kernel'] for _, l in stuck}
        first = (stuck[0][0] - launch_ns) / 1e9 if stuck and launch_ns else None
        ok = (p.returncode == 0 and 'hang_kernel: ok' in p.stdout and stuck and
              first is not None and first <= 3.0 and not others and
              all(l['grid'] == (16, 1, 1) and l['block'] == (128, 1, 1) and l['exact'] == 1
                  and l['later'] == 0 for _, l in stuck) and
              (stuck[-1][0] - launch_ns) / 1e9 >= 3.0)
        last = stuck[-1][1] if stuck else None
        print(f"[{'PASS' if ok else 'FAIL'}] launch watch names the stuck kernel: first report "
              f"{first} s after its launch, {len(stuck)} reports, last {last}, others {others}, "
              f"{len(got)} records; exit {p.returncode} {p.stdout.strip()[-120:]!r} "
              f"{p.stderr.strip()[-300:]!r}")
        failed += not ok
        costs = {}
        for label, kind in [('no agent', None), ('agent, no watch', False), ('watched', True)]:
            argv = [f'{a.bin}/cupti_inflight', 'plain', '20000']
            us = []
            for _ in range(3):
                if kind is None:
                    r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
                else:
                    r, _ = watched(a, tmp, argv, watch=kind)
                m = re.search(r'us_per_launch ([0-9.]+)', r.stdout)
                us.append(float(m.group(1)) if m else float('nan'))
            costs[label] = sorted(us)[1]
            print(f'launch cost {label}: {us} us per launch (median {costs[label]:.3f})')
        print(f"watch cost: {costs['watched'] - costs['agent, no watch']:.3f} us per launch over "
              f"the agent alone ({costs['watched'] / costs['no agent']:.3f}x of no agent)")
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
