"""The CUDA agent's launch timer alone (issue 25; runtime/cuda_agent/launch_timer.h), without gpubt:
the agent started with a config that times launches and their calls (time, timecalls, live 100 ms, an inherited socket) and no
device probes, its FinishedLaunches records decoded here (runtime/abi/finished_launches.cpp's
layout, read independently of gpubt's reader). kernel_time: every launch of busyA/B/C and the gate
reported once, each busy launch's duration at most its CUDA event pair's (the events enclose the
kernel) and within 3% of it, start < end on CLOCK_MONOTONIC inside the run; graph_add: its 3 graph
replays give 3 graphAdd records (per kernel node); both programs' results unchanged. launch_call
(each record's call time, from CUPTI's record of the launch call): known and before the start for every kernel_time launch;
a gate, launched on its idle stream, starts soon after its call (< IDLE_MAX_US); a busy kernel,
launched right behind its gate on the same stream, waits about the gate's time (>= 90% of
GATE_US)."""
import re
import struct
import subprocess
import tempfile
import time

from agent_socket import run_under_agent

FINISHED_LAUNCHES = 17  # runtime/abi/program_spec.h EventKind
ENTRY = struct.Struct('<QQQQQ3I3III')
BUSY_US = {'busyA': 400, 'busyB': 1500, 'busyC': 3000}
GATE_US = 2000  # kernel_time's default
IDLE_MAX_US = 500  # an idle stream's call to start: tens of us; generous on a loaded host
ROUNDS = 3


def decode(p):
    pid, lost, count = struct.unpack_from('<QQQ', p, 0)
    pos, launches = 24, []
    for _ in range(count):
        f = ENTRY.unpack_from(p, pos)
        pos += ENTRY.size
        name = p[pos:pos + f[12]].decode(errors='replace')
        pos += f[12]
        launches.append({'seq': f[0], 'stream': f[1], 'start': f[2], 'end': f[3], 'call': f[4],
                         'grid': f[5:8], 'block': f[8:11], 'device': f[11], 'kernel': name})
    return {'pid': pid, 'lost': lost, 'launches': launches}


def timed(a, tmp, argv):
    t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    p, got = run_under_agent(a.agent, tmp, argv, ['live\t100', 'time\t1', 'timecalls\t1'], FINISHED_LAUNCHES,
                             decode)
    t1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    launches = [l for _, r in got for l in r['launches']]
    lost = sum(r['lost'] for _, r in got)
    return p, launches, lost, (t0, t1)


def launch_call_check(launches, rc):
    """launch_call (the launch call's start) against the start, per kernel_time launch, past the warm-up
    round (each kernel's earliest launch)."""
    waits = {}
    for l in sorted(launches, key=lambda l: l['start']):
        k = next((k for k in [*BUSY_US, 'gate']
                  if re.fullmatch(rf'_Z\d+{k}\w*', l['kernel'])), None)
        if k:
            waits.setdefault(k, []).append(None if not l['call'] or l['call'] > l['start']
                                           else (l['start'] - l['call']) / 1000)
    ok = rc == 0 and len(waits) == len(BUSY_US) + 1 and all(
        w is not None for ws in waits.values() for w in ws)
    ok = ok and all(w < IDLE_MAX_US for w in waits['gate'][1:]) and all(
        w >= 0.9 * GATE_US for k in BUSY_US for w in waits[k][1:])
    return ('launch timer: launch_call known and before the start; an idle stream\'s gate starts '
            f'within {IDLE_MAX_US} us of its call, a kernel queued behind it waits >= 90% of the '
            f'gate ({GATE_US} us)', ok,
            '; '.join(f'{k} call-to-start us {[None if w is None else round(w, 1) for w in ws]}'
                      for k, ws in waits.items()) + ' (None: no call time or after the start)')


def launch_timer_cases(a, row):
    with tempfile.TemporaryDirectory() as tmp:
        plain = subprocess.run([f'{a.bin}/kernel_time', str(ROUNDS)], capture_output=True,
                               text=True, timeout=120)
        p, launches, lost, (t0, t1) = timed(a, tmp, [f'{a.bin}/kernel_time', str(ROUNDS)])
        events = {}
        for k, v in re.findall(r'^event_us (\w+) \d+ (\d+(?:\.\d+)?)$', p.stdout, re.M):
            events.setdefault(k, []).append(float(v))
        same = re.findall(r'checksum \S+', p.stdout) == re.findall(r'checksum \S+', plain.stdout)
        parts, ok = [], p.returncode == 0 and same and not lost
        for k in BUSY_US:
            mine = [l for l in launches if re.fullmatch(rf'_Z\d+{k}\w*', l['kernel'])]
            durs = [(l['end'] - l['start']) / 1000 for l in mine]
            ev = events.get(k, [])
            good = (len(mine) == len(ev) == ROUNDS + 1 and
                    all(t0 < l['start'] < l['end'] < t1 for l in mine) and
                    all(d <= e and e - d <= 0.03 * e for d, e in zip(durs[1:], ev[1:])))
            ok &= good
            parts.append(f'{k}: {len(mine)} records, durations {[round(d, 1) for d in durs]} us, '
                         f'events {ev}')
        gates = [l for l in launches if 'gate' in l['kernel']]
        ok &= len(gates) == 3 * (ROUNDS + 1)
        row('launch timer: every kernel_time launch once, durations within the events (3%)', ok,
            '; '.join(parts) + f'; gates {len(gates)}; lost {lost}; checksum same {same}; exit '
            f'{p.returncode} {p.stderr.strip()[-300:]!r}')
        row(*launch_call_check(launches, p.returncode))
        plain = subprocess.run([f'{a.bin}/graph_add'], capture_output=True, text=True, timeout=120)
        p, launches, lost, _ = timed(a, tmp, [f'{a.bin}/graph_add'])
        nodes = [l for l in launches if 'graphAdd' in l['kernel']]
        ok = p.returncode == 0 and p.stdout == plain.stdout and len(nodes) == 3 and not lost
        row('launch timer: CUDA graph replays timed per kernel node', ok,
            f'{len(nodes)} graphAdd records (want 3) of {len(launches)}; exit {p.returncode} '
            f'{p.stdout.strip()[-150:]!r} {p.stderr.strip()[-300:]!r}')
