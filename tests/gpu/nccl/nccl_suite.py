#!/usr/bin/env python3
"""Issue 27 on 2 GPUs: gpubt traces a real 2-rank DDP job (tests/gpu/nccl/ddp_job.py under
torchrun) and is judged against the job's own truth, its DDP comm hook:
  1. plain run: the job alone (its losses and final parameters are the reference);
  2. traced run, the same job with rank 1 a straggler at step K: four gpubt beside it, system-wide
     (no -c/-p; see below): tools/ncclsnoop.bt, tools/nccllat.bt, tools/ncclhang.bt with --metrics
     (a real Prometheus scrapes it) and a count script. Per rank: ncclAllReduce count == hook
     count; each all-reduce's bytes, datatype, reduction op, result and seq (0.. on the
     communicator, equal across ranks for one collective) match the hook's bucket; ncclhang names
     rank 1 late at one of step K's all-reduces, by about the sleep; Prometheus' straggler query
     names rank 1; losses and parameters equal the plain run's;
  3. hang run: rank 1 sleeps --hang-s before a step's backward; while it sleeps Prometheus' hung-rank
     query and ncclhang's 5 s report name rank 1 and the collective it has not reached;
  4. Xid: whether the driver has tracepoint:nvidia:nvidia_dev_xid here (recorded, not judged).
Why system-wide: torchrun starts the ranks as its children; `-c torchrun` traces torchrun's own
pid (uprobes are attached per process), and `-p` needs the ranks' pids before they make their
communicator. Without -c/-p the uprobes are on the library file, so every rank that maps it fires;
`nccl` is then the libnccl.so.2 ld.so would find for gpubt, so LD_LIBRARY_PATH names PyTorch's.

Prints [PASS]/[FAIL]/[INFO] lines; writes OUT/nccl_report.txt (those lines and every tool's real
output, for the README) and OUT/nccl_logs.tar.gz (all logs). Every wait has a timeout; the whole
suite gives up after --budget-s seconds (default 220).
--fake-nccl LIB judges fake_job.py on the fake libnccl instead (CI, no GPU: the suite's own test).
usage: nccl_suite.py --gpubt PATH --out DIR [--prometheus PATH(.xz)] [--steps N] [--straggle-step K]
                     [--fake-nccl LIB]"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from run_metrics import free_port, prometheus_binary, query, wait_for  # noqa: E402
TOOLS = os.path.join(ROOT, "tools")
# The README's "Distributed jobs" queries (tests/e2e/run_nccl_metrics.py checks them without a GPU).
STRAGGLER = "topk(1, gpubt_nccl_worst_lag)"
HUNG = "gpubt_nccl_issued < on(comm) group_left max by (comm) (gpubt_nccl_issued)"
COUNT_SCRIPT = ("uprobe:nccl:ncclAllReduce { @allreduce[pid, nccl_rank(args.comm)] = count(); "
                "@redop[pid, args.op] = count(); }")
# Item 2, a first look (INFO only, not judged): which kernel launches an all-reduce makes on its
# own thread (NCCL launches its kernel in the call, or in ncclGroupEnd inside a group), and
# whether kname() names them: what a host-side match of call and NCCL kernel would build on.
LAUNCH_SCRIPT = ("uprobe:nccl:ncclAllReduce { @in[tid] = 1; } "
                 "uretprobe:nccl:ncclAllReduce { delete(@in[tid]); } "
                 "uprobe:cuda:cuLaunchKernel, uprobe:cuda:cuLaunchKernelEx / @in[tid] / "
                 "{ @launch[pid, func, kname(args.f)] = count(); } "
                 "END { clear(@in); }")
NCCL_TYPES = {"float32": "ncclFloat32", "float16": "ncclFloat16", "bfloat16": "ncclBfloat16",
              "float64": "ncclFloat64"}
TYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8}

report = []
failures = [0]
procs = []  # everything started, ended in finally (process groups)


def line(kind, text, detail=""):
    s = f"[{kind}] {text}" + (f"\n  {detail}" if detail and kind == "FAIL" else "")
    print(s, flush=True)
    report.append(s)


def check(ok, what, detail=""):
    line("PASS" if ok else "FAIL", what, detail)
    failures[0] += 0 if ok else 1
    return ok


def section(title, text):
    report.append(f"\n===== {title} =====\n{text.rstrip()}\n")


def http(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def start(cmd, log, env=None):
    p = subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    procs.append(p)
    return p


def end(p, sig=signal.SIGINT, timeout=20):
    """Signal P's process group; kill it if it has not ended in TIMEOUT s. Its exit status."""
    if p.poll() is None:
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    return p.returncode


class Gpubt:
    def __init__(self, gpubt, name, args, env, work):
        self.name, self.log = name, os.path.join(work, f"gpubt_{name}.txt")
        self.p = start([gpubt, *args], self.log, env)

    def text(self):
        return open(self.log, errors="replace").read()

    def attached(self, timeout=90):
        wait_for(lambda: "Attaching" in self.text() or self.p.poll() is not None, timeout)
        return self.p.poll() is None and "Attaching" in self.text()

    def stop(self):
        rc = end(self.p)
        return rc, self.text()


def torchrun(job_args, out, log, env):
    """The 2-rank job; with FAKE_NCCL in ENV, fake_job.py (its own launcher) on that library."""
    os.makedirs(out, exist_ok=True)
    if env.get("FAKE_NCCL"):
        cmd = [sys.executable, os.path.join(HERE, "fake_job.py")]
    else:
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
               os.path.join(HERE, "ddp_job.py")]
    return start(cmd + ["--out", out, *job_args], log, env)


def wait_job(p, timeout):
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        end(p, signal.SIGKILL, 5)
        return None
    return p.returncode


def job_results(out):
    ranks = {}
    for r in (0, 1):
        path = os.path.join(out, f"rank{r}.json")
        if os.path.exists(path):
            ranks[r] = json.load(open(path))
    return ranks


def find_nccl(env):
    """The libnccl.so.2 PyTorch loads (import torch maps it), with torch's and NCCL's versions."""
    code = ("import torch, torch.distributed, json, os\n"
            "libs = sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libnccl' in l})\n"
            "print(json.dumps({'torch': torch.__version__, 'nccl': '.'.join(map(str, "
            "torch.cuda.nccl.version())), 'libs': libs, 'gpus': torch.cuda.device_count()}))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env=env)
    try:
        info = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None, r.stdout + r.stderr
    if not info["libs"]:  # not loaded at import: the pip package's copy
        import torch  # noqa: F401 (only where the suite runs: the GPU machine)
        site = os.path.dirname(os.path.dirname(torch.__file__))
        info["libs"] = sorted(glob.glob(os.path.join(site, "nvidia", "nccl", "lib", "libnccl.so*")))
    return info, r.stderr


def record_xid(work):
    """Whether the driver has the Xid tracepoint here, and what the kernel log holds."""
    lines = []
    found = []
    for base in ("/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events"):
        if os.path.isdir(base):
            nv = sorted(glob.glob(os.path.join(base, "nvidia*")))
            lines.append(f"{base}: {'; '.join(nv) if nv else 'no nvidia* event group'}")
            found += [d for d in nv if os.path.isdir(os.path.join(d, "nvidia_dev_xid"))]
        else:
            lines.append(f"{base}: absent (tracefs not mounted there)")
    try:
        mods = open("/proc/modules").read()
        lines.append("nvidia module loaded: " + ("yes" if re.search(r"^nvidia ", mods, re.M)
                                                 else "no"))
    except OSError as e:
        lines.append(f"/proc/modules: {e}")
    try:
        drv = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip()
        lines.append(f"driver: {drv}")
    except (OSError, subprocess.TimeoutExpired) as e:
        lines.append(f"nvidia-smi: {e}")
    try:
        d = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=30)
        xids = [l for l in d.stdout.splitlines() if "NVRM: Xid" in l]
        lines.append(f"dmesg readable: {d.returncode == 0}; NVRM Xid lines: {len(xids)}" +
                     ("".join("\n  " + l for l in xids[-5:])))
    except (OSError, subprocess.TimeoutExpired) as e:
        lines.append(f"dmesg: {e}")
    text = "\n".join(lines)
    open(os.path.join(work, "xid.txt"), "w").write(text + "\n")
    line("INFO", "Xid: tracepoint:nvidia:nvidia_dev_xid " +
         ("exists: " + ", ".join(found) if found else "is absent on this machine") +
         " (details in xid.txt)")
    section("Xid (item 5): what this machine has", text)


def parse_snoop(text):
    """ncclsnoop.bt's lines: {pid: [dict(rank, nranks, comm, op, seq, bytes, dtype, us, result)]}."""
    out = {}
    pat = re.compile(r"^(\d+)\s+(-?\d+)/(-?\d+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(\S+)$")
    for l in text.splitlines():
        m = pat.match(l.strip())
        if m:
            pid, rank, nranks, comm, op, seq, nbytes, dtype, us, result = m.groups()
            out.setdefault(int(pid), []).append(dict(
                rank=int(rank), nranks=int(nranks), comm=int(comm), op=op, seq=int(seq),
                bytes=int(nbytes), dtype=dtype, us=int(us), result=result))
    return out


def map_ints(text, name):
    """@name[k1, k2]: v lines of gpubt's exit printout: {(k1, k2): v} (keys as strings)."""
    out = {}
    for m in re.finditer(rf"^@{name}\[(.*)\]: (-?\d+)$", text, re.M):
        out[tuple(k.strip() for k in m.group(1).split(","))] = int(m.group(2))
    return out


def hist_total(text, name, first_key):
    """The counts of every @name[first_key, ...] histogram of gpubt's printout, summed."""
    total, inside = 0, False
    for l in text.splitlines():
        if l.startswith("@"):
            inside = l.startswith(f"@{name}[{first_key},")
            continue
        m = re.match(r"^\[[^\]]*[\])]\s+(\d+) \|", l)
        if inside and m:
            total += int(m.group(1))
    return total


class Prometheus:
    def __init__(self, binary, target_port, work):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        config = os.path.join(work, "prometheus.yml")
        with open(config, "w") as c:
            c.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: gpubt\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{target_port}']\n")
        self.p = start([binary, f"--config.file={config}",
                        f"--storage.tsdb.path={os.path.join(work, 'prometheus-data')}",
                        f"--web.listen-address=127.0.0.1:{self.port}"],
                       os.path.join(work, "prometheus.log"))
        self.ready = bool(wait_for(lambda: http(self.base + "/-/ready") is not None, 30))

    def query(self, expr, want, timeout=15):
        """The first answer WANT accepts within TIMEOUT s (Prometheus scrapes every second)."""
        last = []

        def ask():
            nonlocal last
            last = query(self.base, expr)
            return want(last)

        return bool(wait_for(ask, timeout)), last


def check_traced_run(a, plain, traced, texts, straggle_step):
    """The traced job against its own hook, and against the plain run."""
    check(set(plain) == {0, 1} and set(traced) == {0, 1}, "both runs: both ranks wrote results",
          f"plain {sorted(plain)}, traced {sorted(traced)}")
    if set(plain) != {0, 1} or set(traced) != {0, 1}:
        return
    same = all(plain[r]["losses"] == traced[r]["losses"] and
               plain[r]["params_sha256"] == traced[r]["params_sha256"] for r in (0, 1))
    check(same, "the traced job's losses and final parameters equal the plain run's, per rank",
          f"plain {[plain[r]['losses'][-1:] for r in (0, 1)]}, traced "
          f"{[traced[r]['losses'][-1:] for r in (0, 1)]}")
    pid_rank = {traced[r]["pid"]: r for r in (0, 1)}
    hooks = {r: traced[r]["calls"] for r in (0, 1)}
    line("INFO", f"hook: {len(hooks[0])} all-reduces a rank, "
         f"{len([c for c in hooks[0] if c['step'] == 1])} buckets a step after the first; "
         f"torch {traced[0]['torch']}, NCCL {traced[0]['nccl']}")

    counts = map_ints(texts["count"], "allreduce")
    for pid, r in pid_rank.items():
        got = counts.get((str(pid), str(r)))
        check(got == len(hooks[r]), f"rank {r}: ncclAllReduce count {got} == the hook's "
              f"{len(hooks[r])} (nccl_rank() = torch's rank)", str(counts))
    redops = map_ints(texts["count"], "redop")
    check(set(k[1] for k in redops) == {"ncclSum"} and sum(redops.values()) ==
          sum(len(h) for h in hooks.values()), "every all-reduce's op is ncclSum (the hook's SUM)",
          str(redops))

    snoop = parse_snoop(texts["snoop"])
    seqs_by_rank = {}
    for pid, r in pid_rank.items():
        lines = sorted(snoop.get(pid, []), key=lambda l: l["seq"])
        ar = [l for l in lines if l["op"] == "ncclAllReduce"]
        seqs_by_rank[r] = [l["seq"] for l in ar]
        check(len(ar) == len(hooks[r]), f"rank {r}: ncclsnoop has {len(ar)} all-reduce lines, the "
              f"hook {len(hooks[r])}")
        bad = [(i, l, h) for i, (l, h) in enumerate(zip(ar, hooks[r]))
               if l["bytes"] != h["numel"] * TYPE_BYTES.get(h["dtype"], 0) or
               l["dtype"] != NCCL_TYPES.get(h["dtype"]) or
               l["result"] not in ("ncclSuccess", "ncclInProgress") or
               l["rank"] != r or l["nranks"] != 2]
        check(bool(ar) and not bad, f"rank {r}: each all-reduce's bytes, datatype, result, rank/nranks match "
              "its bucket", str(bad[:3]))
        check(bool(lines) and [l["seq"] for l in lines] == list(range(len(lines))),
              f"rank {r}: seq numbers its {len(lines)} collectives 0, 1, 2, ... in order",
              str([(l['seq'], l['op']) for l in lines][:20]))
    # PyTorch broadcasts with ncclBcast, which calls ncclBroadcast inside: one collective, one
    # line under the outer name (NCCL 2.28's job: 1 AllGather, 2 Bcast, step 0's all-reduce,
    # 2 Bcast, then 3 all-reduces a step: 33 collectives, seq 0..32).
    nested = [(l["seq"], l["op"]) for pid in pid_rank for l in snoop.get(pid, [])
              if l["op"] == "ncclBroadcast"]
    check(not nested, "ncclsnoop: no line for the ncclBroadcast inside ncclBcast (one collective)",
          str(nested[:6]))
    comms = {l["comm"] for pid in pid_rank for l in snoop.get(pid, [])}
    check(len(comms) == 1 and 0 not in comms, "one communicator, the same id on both ranks",
          str(comms))
    check(seqs_by_rank.get(0) == seqs_by_rank.get(1) and bool(seqs_by_rank.get(0)),
          "the i-th all-reduce has one seq on both ranks (one collective)",
          f"{seqs_by_rank.get(0, [])[:12]} vs {seqs_by_rank.get(1, [])[:12]}")

    # The straggler: rank 1 late at one of step K's all-reduces, by about the sleep.
    step_seqs = {s for s, h in zip(seqs_by_rank.get(1, []), hooks[1]) if h["step"] == straggle_step}
    late = re.findall(r"late: comm (\d+) rank (\d+) \(pid (\d+)\) fell behind at collective seq "
                      r"(\d+) \((\w+)\): issued it (\d+) ms after rank (\d+)", texts["hang"])
    late1 = [l for l in late if l[1] == "1"]
    check(bool(late) and all(l[1] != l[6] for l in late), "ncclhang: no rank named late behind "
          "itself", str(late))
    want_ms = int(a.straggle_s * 1000 * 0.75)
    check(bool(late1) and int(late1[-1][3]) in step_seqs and int(late1[-1][5]) >= want_ms and
          late1[-1][6] == "0",
          f"ncclhang: rank 1 named late at step {straggle_step}'s all-reduce (seq in "
          f"{sorted(step_seqs)}), >= {want_ms} ms after rank 0", str(late))
    rows = re.findall(r"^\s+(\d+)\s+(\d)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$", texts["hang"],
                      re.M)
    worst = {row[1]: int(row[6]) for row in rows}
    issued = {row[1]: int(row[3]) for row in rows}  # the last report's (END)
    lines_per_rank = {str(r): len(snoop.get(pid, [])) for pid, r in pid_rank.items()}
    check(bool(rows) and issued == lines_per_rank, "ncclhang: each rank's ISSUED equals its "
          "ncclsnoop lines (each collective counted once)", f"{issued} vs {lines_per_rank}")
    line("INFO", f"ncclhang's worst lag per rank: {worst} (ms; rank 0's is the start's skew)")
    total = hist_total(texts["lat"], "usecs", "ncclAllReduce")
    check(total == sum(len(h) for h in hooks.values()),
          f"nccllat: its ncclAllReduce histograms count {total} calls, the hooks "
          f"{sum(len(h) for h in hooks.values())}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpubt", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--prometheus", default="")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--straggle-step", type=int, default=6)
    ap.add_argument("--straggle-s", type=float, default=2.0)
    ap.add_argument("--hang-s", type=float, default=14.0)
    ap.add_argument("--budget-s", type=int, default=220)
    ap.add_argument("--fake-nccl", default="",
                    help="tests/programs' fake libnccl.so.2: fake_job.py instead of PyTorch (CI)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="gpubt-nccl-")
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError()))
    signal.alarm(a.budget_s)
    t0 = time.time()
    try:
        run_all(a, work)
    except TimeoutError:
        check(False, f"the suite ran past its {a.budget_s} s budget: stopped")
    except Exception:  # a bug of the suite's own: said as a failure, the logs still saved
        check(False, "the suite itself failed", traceback.format_exc())
    finally:
        signal.alarm(0)
        for p in procs:
            if p.poll() is None:
                end(p, signal.SIGKILL, 5)
        line("INFO", f"{time.time() - t0:.0f} s; {failures[0]} failed")
        with open(os.path.join(a.out, "nccl_report.txt"), "w") as f:
            f.write("\n".join(report) + "\n")
        with tarfile.open(os.path.join(a.out, "nccl_logs.tar.gz"), "w:gz") as t:
            for name in sorted(os.listdir(work)):
                if name not in ("prometheus", "prometheus-data"):
                    t.add(os.path.join(work, name), arcname=name)
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures[0] else 77 if any(l.startswith("[SKIP]") for l in report) else 0


def run_all(a, work):
    env = dict(os.environ)
    if a.fake_nccl and not prometheus_binary(a.prometheus, work):
        line("SKIP", "no prometheus installed")
        return
    if a.fake_nccl:  # CI: the judging, on the fake library, without a GPU or PyTorch
        env["FAKE_NCCL"] = os.path.abspath(a.fake_nccl)
        info, err = {"torch": "none", "nccl": "fake", "libs": [env["FAKE_NCCL"]], "gpus": 2}, ""
    else:
        info, err = find_nccl(env)
    if not info or info["gpus"] < 2:
        check(False, "PyTorch sees 2 GPUs and NCCL", f"{info} {err[-1500:]}")
        return
    line("INFO", f"torch {info['torch']}, NCCL {info['nccl']}, libnccl: {info['libs']}")
    if not check(bool(info["libs"]), "PyTorch's libnccl.so.2 is a file gpubt can probe",
                 "import torch mapped no libnccl and none is in site-packages/nvidia/nccl/lib "
                 "(NCCL linked statically into libtorch_cuda.so?)"):
        return
    nccl_dir = os.path.dirname(info["libs"][0])
    genv = dict(env, LD_LIBRARY_PATH=nccl_dir + (":" + env["LD_LIBRARY_PATH"]
                                                 if env.get("LD_LIBRARY_PATH") else ""))
    record_xid(work)
    job = ["--steps", str(a.steps), "--straggle-step", str(a.straggle_step),
           "--straggle-s", str(a.straggle_s)]

    # 1. plain
    p = torchrun(job, os.path.join(work, "plain"), os.path.join(work, "job_plain.txt"), env)
    rc = wait_job(p, 150)
    check(rc == 0, "plain run: the job ends with 0", f"rc {rc}: " +
          open(os.path.join(work, "job_plain.txt")).read()[-2000:])
    plain = job_results(os.path.join(work, "plain"))

    # 2. traced, with Prometheus scraping ncclhang's --metrics
    port = free_port()
    prom_bin = prometheus_binary(a.prometheus, work)
    prom = Prometheus(prom_bin, port, work) if prom_bin else None
    check(bool(prom and prom.ready), f"a real Prometheus server starts ({prom_bin})")
    tools = {
        "snoop": [os.path.join(TOOLS, "ncclsnoop.bt")],
        "lat": [os.path.join(TOOLS, "nccllat.bt")],
        "hang": ["--metrics", f"127.0.0.1:{port}", os.path.join(TOOLS, "ncclhang.bt")],
        "count": ["-v", "-e", COUNT_SCRIPT],
    }
    g = {name: Gpubt(a.gpubt, name, args, genv, work) for name, args in tools.items()}
    launch = Gpubt(a.gpubt, "launch", ["-e", LAUNCH_SCRIPT], genv, work) if not a.fake_nccl else None
    attached = all(x.attached() for x in g.values())
    if launch and not launch.attached():
        line("INFO", "the kernel-launch look did not attach: " + launch.text()[-300:])
    check(attached, "four gpubt attach system-wide to PyTorch's libnccl",
          "\n".join(f"{n}: {x.text()[-600:]}" for n, x in g.items()))
    if not attached:
        return
    p = torchrun(job, os.path.join(work, "traced"), os.path.join(work, "job_traced.txt"), env)
    rc = wait_job(p, 150)
    check(rc == 0, "traced run: the job ends with 0", f"rc {rc}: " +
          open(os.path.join(work, "job_traced.txt")).read()[-2000:])
    if prom and prom.ready:
        ok, ans = prom.query(STRAGGLER, lambda r: len(r) == 1 and r[0]["metric"].get("rank") == "1")
        check(ok, f"Prometheus: {STRAGGLER} names rank 1 (the straggler)", str(ans))
        section(f"PromQL {STRAGGLER} (traced run)", json.dumps(ans, indent=1))
        try:
            section("/metrics of ncclhang.bt (traced run)",
                    "\n".join(l for l in http(f"http://127.0.0.1:{port}/metrics").splitlines()
                              if l.startswith("gpubt_nccl")))
        except OSError as e:
            section("/metrics of ncclhang.bt (traced run)", str(e))
    texts = {}
    for name, x in g.items():
        rc, texts[name] = x.stop()
        check(rc == 0, f"gpubt {name}: ends on Ctrl-C with 0", f"rc {rc}: {texts[name][-1500:]}")
        section(f"gpubt {' '.join(tools[name])} (traced run)", texts[name])
    if launch:
        rc, text = launch.stop()
        line("INFO", "kernel launches inside ncclAllReduce (item 2): " +
             ("; ".join(re.findall(r"^@launch\[(.*)$", text, re.M)[:6]) or "none seen"))
        section("gpubt -e '" + LAUNCH_SCRIPT + "' (traced run, INFO)", text)
    check_traced_run(a, plain, job_results(os.path.join(work, "traced")), texts, a.straggle_step)

    # 3. hang: rank 1 sleeps --hang-s before step 2's backward
    hang = Gpubt(a.gpubt, "hang_run", ["--metrics", f"127.0.0.1:{port}",
                                        os.path.join(TOOLS, "ncclhang.bt")], genv, work)
    if not check(hang.attached(), "hang run: gpubt attaches", hang.text()[-1000:]):
        return
    out = os.path.join(work, "hang")
    p = torchrun(["--steps", "4", "--straggle-step", "2", "--straggle-s", str(a.hang_s)], out,
                 os.path.join(work, "job_hang.txt"), env)
    sleeping = wait_for(lambda: os.path.exists(os.path.join(out, "rank1.straggling")), 120)
    check(bool(sleeping), "hang run: rank 1 is held before its step-2 backward")
    if sleeping and prom and prom.ready:
        ok, ans = prom.query(HUNG, lambda r: len(r) == 1 and r[0]["metric"].get("rank") == "1",
                             timeout=a.hang_s / 2)
        check(ok, f"Prometheus, while rank 1 is held: {HUNG} names rank 1", str(ans))
        section(f"PromQL {HUNG} (hang run, rank 1 held)", json.dumps(ans, indent=1))
        # ncclhang's own 5 s report, while it is held (its reports come every 5 s).
        wait_for(lambda: "rank 1 (pid" in hang.text() and "has not issued" in hang.text(),
                 min(7, a.hang_s / 2))
    rc = wait_job(p, a.hang_s + 90)
    check(rc == 0, "hang run: the job ends with 0 once rank 1 goes on", f"rc {rc}: " +
          open(os.path.join(work, "job_hang.txt")).read()[-2000:])
    rc, text = hang.stop()
    section("gpubt --metrics ... tools/ncclhang.bt (hang run)", text)
    check(re.search(r"comm \d+ rank 1 \(pid \d+\) has not issued collective seq \d+ "
                    r"\(ncclAllReduce\)", text) is not None,
          "ncclhang's report while rank 1 was held names it and the all-reduce it has not issued",
          text[-1500:])


if __name__ == "__main__":
    sys.exit(main())
