#!/usr/bin/env python3
"""What the launch-timing tools cost a training step (issue 25), measured in long-lived twins:
tests/gpu/ml/train_service.py (the transformer step of train_cost.py) started several times at
once, plain (P), under `gpubt -c` with each tool, and with the agent in timing mode (T, `gpubt
agent env --timing`) that gpubt attaches to with -p for each tool in turn. Bursts of each traced
job and P alternate round by round (which runs first alternating too); a row is the median of the
per-round ratios of burst median step times, so drift of the host hits both alike. Eager and
torch.compile'd; every row printed as PASS/FAIL against the issue's goal.
usage: tool_cost_paired.py --gpubt G --agent A [--rounds N] [--steps N] [--modes eager,compiled]
       [--tools launchlate,...] [--attached-only]"""
import argparse, os, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'gpu'))
import attach_suite  # noqa: E402 - Trainer, Gpubt, paired_timing, the results

TOOLS = [  # (name, gpubt's arguments, the goal)
    ('tools/kerneltime.bt', [f'{ROOT}/tools/kerneltime.bt'], 1.03),
    ('tools/launchlate.bt', [f'{ROOT}/tools/launchlate.bt'], 1.02),
    ('--timeline', ['--timeline', '/tmp/gpubt-tool-cost-timeline.json', '-e', 'gpu:kretprobe:* /last_thread/ { @n = count(); }'], 1.02),
]


def warm(jobs, bursts=3, steps=40):
    """Every job's first bursts at once (torch.compile's compiles in parallel)."""
    for _ in range(bursts):
        for j in jobs:
            j.send_burst(steps)
        for j in jobs:
            j.burst_result()


def measure(a, mode, tmp, plain_env, gpubt_env):
    compiled = mode == 'compiled'
    tools = [t for t in TOOLS if not a.tools or any(w in t[0] for w in a.tools.split(','))]
    launched = [] if a.attached_only else tools
    exports = {'CUDA_INJECTION64_PATH': a.agent, 'GPUBT_AGENT_MODE': 'timing'}
    P = attach_suite.Trainer(plain_env, f'{tmp}/{mode}-P.log', compiled=compiled, wait=False)
    T = attach_suite.Trainer(dict(plain_env, **exports), f'{tmp}/{mode}-T.log', compiled=compiled,
                             wait=False)
    C = {name: attach_suite.Trainer(gpubt_env, f'{tmp}/{mode}-{i}.log', compiled=compiled,
                                    wrap=[a.gpubt] + args, wait=False)
         for i, (name, args, _) in enumerate(launched)}
    for job in [P, T] + list(C.values()):  # all started at once, then each waited for
        job.go()
    warm([P, T] + list(C.values()))
    pair = lambda label, job, target: attach_suite.paired_timing(
        f'{mode}: {label}', job, P, a.rounds, a.steps, [], [], target)
    pair('the agent in timing mode, dormant', T, 1.01)
    for name, args, target in launched:
        pair(f'gpubt -c, {name}', C[name], target)
    for name, args, target in tools:
        # -v: timed from the attach on, and its line says where launch_call comes from.
        g = attach_suite.Gpubt([a.gpubt, '-v', '-p', str(T.pid)] + args, gpubt_env, tmp,
                               wait_for=(T.pid,))
        print(*[l for l in g.text()[1].splitlines() if 'attached to process' in l], sep='\n')
        pair(f'gpubt -p (timing mode), {name}', T, target)
        # A cost is the tool's only if it worked: launchlate attached once printed nothing (its
        # launch_call always 0) at 1.004x (2143ecf).
        rc, out, err = g.stop()
        attach_suite.check(f'{mode}: gpubt -p (timing mode), {name}: its output',
                           rc == 0 and '@' in out, f'exit {rc} {out[-200:]!r} {err[-200:]!r}')
    for job in [P, T] + list(C.values()):
        job.quit()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--gpubt', required=True)
    ap.add_argument('--agent', required=True)
    ap.add_argument('--rounds', type=int, default=15)
    ap.add_argument('--steps', type=int, default=60)
    ap.add_argument('--modes', default='eager,compiled')
    ap.add_argument('--tools', default='', help='only the tools whose name has one of these')
    ap.add_argument('--attached-only', action='store_true', help='no -c twins: -p rows only')
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix='gpubt-tool-cost-')
    plain_env = {k: v for k, v in os.environ.items() if not k.startswith('GPUBT_')}
    gpubt_env = dict(plain_env, GPUBT_AGENT_PATH=a.agent)
    for mode in a.modes.split(','):
        measure(a, mode, tmp, plain_env, gpubt_env)
    r = attach_suite.results
    print(f'tool cost: {sum(r)}/{len(r)} rows within their goal')
    return 0 if all(r) else 1


if __name__ == '__main__':
    sys.exit(main())
