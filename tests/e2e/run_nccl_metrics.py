#!/usr/bin/env python3
"""Per-rank, per-communicator NCCL series through --metrics (issue 27 item 4), without a GPU:
gpubt runs system-wide (no -c/-p: every local rank, as on a node) with tools/ncclhang.bt on the
fake libnccl (tests/programs/nccl: calls that succeed) while tests/programs/nccl_calls runs a
straggler (rank 1 issues seq 3 >= 600 ms after rank 0) and a hang (rank 1 one all-reduce short);
a real Prometheus server scrapes it and the README's PromQL names rank 1 for each. Then the real
libnccl.so.2 (its calls fail, and are traced) with a map keyed by a record: the labels rank, comm
and op as `promtool check metrics` accepts them. Exits 77 (skip) when prometheus, promtool or the
libraries are missing."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_metrics import (Failures, free_port, get, prometheus_scraping, query, samples,  # noqa: E402
                         stop, wait_for)

# The README's "Distributed jobs" queries, checked here and on the GPU (tests/gpu/nccl).
STRAGGLER = "topk(1, gpubt_nccl_worst_lag)"
HUNG = "gpubt_nccl_issued < on(comm) group_left max by (comm) (gpubt_nccl_issued)"
RECORD_SCRIPT = ("uprobe:nccl:ncclAllReduce, uprobe:nccl:ncclBroadcast { @calls[(rank = "
                 "nccl_rank(args.comm), comm = nccl_comm_id(args.comm), op = func)] = count(); }")


class Gpubt:
    """gpubt system-wide with --metrics; its stdout read on a thread (attached: 'Attaching')."""

    def __init__(self, gpubt, args, env):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/metrics"
        self.p = subprocess.Popen([gpubt, "--metrics", f"127.0.0.1:{self.port}", *args],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  stdin=subprocess.DEVNULL, env=env)
        self.lines = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.append(line)

    def attached(self):
        wait_for(lambda: any(l.startswith("Attaching") for l in self.lines) or
                 self.p.poll() is not None, 30)
        return self.p.poll() is None and any(l.startswith("Attaching") for l in self.lines)

    def stop(self):
        _, err, _ = stop(self.p)
        return err


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def check_ncclhang_series(f, gpubt, source, programs, prometheus, tmp):
    fake = f"{programs}/fake-nccl"
    env = dict(os.environ, LD_LIBRARY_PATH=fake)  # `nccl` system-wide: what ld.so would load
    g = Gpubt(gpubt, [f"{source}/tools/ncclhang.bt"], env)
    try:
        if not g.attached():
            f.check(False, "gpubt attaches ncclhang.bt system-wide", g.stop())
            return
        straggler = run([f"{programs}/nccl_calls", f"{fake}/libnccl.so.2", "straggler", "4", "3",
                         "600"])
        hang = run([f"{programs}/nccl_calls", f"{fake}/libnccl.so.2", "2", "3", "1"])
        f.check(straggler.returncode == 0 and hang.returncode == 0, "the two jobs ran",
                straggler.stderr + hang.stderr)
        text = wait_for(lambda: (lambda t: t if 'gpubt_nccl_issued{comm=' in t else None)(
            get(g.url)[2]), 15) or ""
        s = samples(text)
        late = {k: v for k, v in s.items() if k.startswith("gpubt_nccl_worst_lag{")}
        f.check(any(',rank="1"}' in k and v >= 600 for k, v in late.items()),
                "gpubt_nccl_worst_lag{comm,rank} has rank 1's >= 600 ms", text)
        calls = [k for k in s if k.startswith("gpubt_nccl_calls_total{")]
        f.check(any(',rank="0",op="ncclAllReduce"}' in k for k in calls),
                "gpubt_nccl_calls_total has the labels comm, rank and op", text)
        f.check(not any(k.startswith("gpubt__") for k in s), "the @_ scratch maps are not exported",
                text)
        r = subprocess.run([shutil.which("promtool"), "check", "metrics"], input=text,
                           capture_output=True, text=True)
        f.check(r.returncode == 0, "promtool check metrics accepts the ncclhang series",
                r.stdout + r.stderr)
        with prometheus_scraping(f, prometheus, f"127.0.0.1:{g.port}", tmp) as base:
            if not base:
                return
            top = wait_for(lambda: query(base, STRAGGLER), 20) or []
            f.check(len(top) == 1 and top[0]["metric"].get("rank") == "1" and
                    float(top[0]["value"][1]) >= 600,
                    f"Prometheus: {STRAGGLER} names rank 1 (the straggler)", str(top))
            hung = wait_for(lambda: query(base, HUNG), 20) or []
            f.check(len(hung) == 1 and hung[0]["metric"].get("rank") == "1" and
                    float(hung[0]["value"][1]) == 3,
                    f"Prometheus: {HUNG} names rank 1, 3 issued (the hung rank)", str(hung))
    finally:
        if g.p.poll() is None:
            g.stop()


def check_real_library_labels(f, gpubt, programs, promtool):
    g = Gpubt(gpubt, ["-e", RECORD_SCRIPT], dict(os.environ))
    try:
        if not g.attached():
            f.check(False, "gpubt attaches to the real libnccl.so.2 system-wide", g.stop())
            return
        run([f"{programs}/nccl_calls", "libnccl.so.2"])
        want = 'gpubt_calls_total{rank="-1",comm="0",op="ncclAllReduce"}'
        text = wait_for(lambda: (lambda t: t if want in t else None)(get(g.url)[2]), 15) or ""
        s = samples(text)
        f.check(s.get(want) == 2 and
                s.get('gpubt_calls_total{rank="-1",comm="0",op="ncclBroadcast"}') == 1,
                "the real library's failing calls by record labels rank, comm, op", text)
        r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                           text=True)
        f.check(r.returncode == 0, "promtool check metrics accepts them", r.stdout + r.stderr)
    finally:
        if g.p.poll() is None:
            g.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpubt", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    promtool, prometheus = shutil.which("promtool"), shutil.which("prometheus")
    if not promtool or not prometheus:
        print("[SKIP] promtool or prometheus is not installed")
        return 77
    if not os.path.exists(f"{args.programs}/fake-nccl/libnccl.so.2"):
        print("[SKIP] no fake libnccl.so.2 built")
        return 77
    f = Failures()
    with tempfile.TemporaryDirectory(prefix="gpubt-nccl-metrics-") as tmp:
        check_ncclhang_series(f, args.gpubt, args.source, args.programs, prometheus, tmp)
    if "libnccl.so.2 " in run(["/sbin/ldconfig", "-p"]).stdout:
        check_real_library_labels(f, args.gpubt, args.programs, promtool)
    else:
        print("[SKIP] no libnccl.so.2 that ld.so finds (scripts/setup.sh): the real library's part")
    print(f"{f.count} failed" if f.count else "all passed")
    return 1 if f.count else 0


if __name__ == "__main__":
    sys.exit(main())
