#!/usr/bin/env python3
"""gpubt vs bpftrace, side by side in one run: start-up time and per-call uprobe cost.

usage: bench/bench.py --gpubt build/gpubt [--bpftrace bpftrace] [--calls 2000000] [--runs 5]
Prints Markdown tables (paste into bench/RESULTS.md with the command line).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def build_loop(tmp):
    exe = os.path.join(tmp, "loop")
    subprocess.run(["cc", "-O2", "-fno-inline", "-o", exe, os.path.join(HERE, "loop.c")], check=True)
    return exe


def wall(cmd, runs):
    times = []
    for _ in range(runs):
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        times.append(time.monotonic() - t0)
        if p.returncode != 0:
            sys.exit(f"failed: {cmd}\n{p.stderr}")
    return statistics.median(times)


def ns_per_call(cmd, runs):
    vals = []
    for _ in range(runs):
        p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        m = re.search(r"ns_per_call ([0-9.]+)", p.stderr)
        if not m:
            sys.exit(f"no timing from: {cmd}\n{p.stdout}\n{p.stderr}")
        vals.append(float(m.group(1)))
    return statistics.median(vals)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpubt", required=True)
    ap.add_argument("--bpftrace", default="bpftrace")
    ap.add_argument("--calls", type=int, default=2000000)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    tools = {"bpftrace": a.bpftrace, "gpubt": os.path.abspath(a.gpubt)}
    with tempfile.TemporaryDirectory() as tmp:
        loop = build_loop(tmp)
        ten = " ".join(f"uprobe:{loop}:f{i} {{ @[{i}] = count(); }}" for i in range(10))
        startup = {
            "`BEGIN { exit(); }`": "BEGIN { exit(); }",
            "10 uprobes + `BEGIN { exit(); }`": ten + " BEGIN { exit(); }",
        }
        print("### Start-up: launch to exit, median of %d runs (s)\n" % a.runs)
        print("| script | bpftrace | gpubt | gpubt / bpftrace |\n|---|---|---|---|")
        for label, prog in startup.items():
            r = {k: wall([t, "-e", prog], a.runs) for k, t in tools.items()}
            print(f"| {label} | {r['bpftrace']:.3f} | {r['gpubt']:.3f} | {r['gpubt']/r['bpftrace']:.2f}x |")

        cmd = f"{loop} {a.calls}"
        base = ns_per_call([loop, str(a.calls)], a.runs)
        probes = {"`@ = count()`": "@ = count();", "`@[arg0] = hist(arg1)`": "@[arg0] = hist(arg1);"}
        print(f"\n### Per-call cost of a uprobe on `target()`, {a.calls} calls, median of {a.runs} runs (ns/call)\n")
        print("| action | no tracing | bpftrace | gpubt | added: bpftrace | added: gpubt | gpubt / bpftrace (added) |")
        print("|---|---|---|---|---|---|---|")
        for label, body in probes.items():
            prog = f"uprobe:{loop}:target {{ {body} }}"
            r = {k: ns_per_call([t, "-e", prog, "-c", cmd], a.runs) for k, t in tools.items()}
            ab, ag = r["bpftrace"] - base, r["gpubt"] - base
            print(f"| {label} | {base:.1f} | {r['bpftrace']:.1f} | {r['gpubt']:.1f} | {ab:.1f} | {ag:.1f} | {ag/ab:.2f}x |")


if __name__ == "__main__":
    main()
