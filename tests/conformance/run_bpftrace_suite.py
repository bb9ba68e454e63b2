#!/usr/bin/env python3
"""Runs bpftrace's own runtime test cases (tests/runtime of a bpftrace checkout, e.g. tag v0.17.0)
with gpubt and/or the installed bpftrace in bpftrace's place, and its bundled tools/*.bt through
`gpubt --dry-run` (and `bpftrace -d`). Prints pass counts; writes per-case results as JSON.

The case files are bpftrace's, read where they lie; none of them is copied into this repository.
Their format (blocks of NAME/RUN|PROG/EXPECT/TIMEOUT/BEFORE/AFTER/REQUIRES/REQUIRES_FEATURE/ENV/
MIN_KERNEL/MAX_KERNEL/ARCH/WILL_FAIL lines) and meaning follow bpftrace's runner: EXPECT is a
regular expression searched in stdout+stderr; the run must exit 0 unless WILL_FAIL or it timed out;
TIMEOUT counts from the moment probes are attached.
"""
import argparse
import fnmatch
import json
import os
import platform
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ATTACH_TIMEOUT = 5
NOTIFY = "__BPFTRACE_NOTIFY_PROBES_ATTACHED"
FIELDS = {"NAME", "RUN", "PROG", "EXPECT", "TIMEOUT", "BEFORE", "AFTER", "MIN_KERNEL", "MAX_KERNEL",
          "REQUIRES", "ENV", "ARCH", "REQUIRES_FEATURE", "WILL_FAIL"}


def parse_file(path, suite):
    cases, block = [], []
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        if line.startswith("#"):
            continue
        if line.strip():
            block.append(line)
        if (not line.strip() or i == len(lines) - 1) and block:
            cases.append(make_case(block, suite, path))
            block = []
    return [c for c in cases if not c["arch"] or platform.machine().lower() in c["arch"]]


def make_case(block, suite, path):
    c = {"suite": suite, "requires": [], "features": [], "env": {}, "arch": [], "will_fail": False,
         "run": "", "prog": "", "before": "", "after": "", "min_kernel": "", "max_kernel": ""}
    for item in block:
        parts = item.split()
        key, value = parts[0], " ".join(parts[1:])
        if key not in FIELDS:
            raise SystemExit(f"{path}: unknown field {key}")
        if key == "REQUIRES":
            c["requires"].append(value)
        elif key == "REQUIRES_FEATURE":
            c["features"] += value.split()
        elif key == "ENV":
            c["env"].update(kv.split("=", 1) for kv in value.split())
        elif key == "ARCH":
            c["arch"] = [a.strip() for a in value.split("|")]
        elif key == "WILL_FAIL":
            c["will_fail"] = True
        elif key == "TIMEOUT":
            c["timeout"] = int(value)
        else:
            c[key.lower()] = value
    c["id"] = f"{suite}.{c['name']}"
    return c


def read_cases(runtime_dir):
    cases = []
    for root, dirs, files in os.walk(runtime_dir):
        dirs[:] = sorted(d for d in dirs if d not in ("engine", "scripts", "outputs"))
        for f in sorted(files):
            if not f.startswith("."):
                cases += parse_file(os.path.join(root, f), f)
    return cases


def version_tuple(v):
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def machine_features(bpftrace):
    """bpftrace's --info decides which REQUIRES_FEATURE cases this machine can run, for both tools."""
    info = subprocess.run([bpftrace, "--info"], capture_output=True, text=True)
    out = info.stdout + info.stderr
    probes = {"loop": "Loop support: yes", "probe_read_kernel": "probe_read_kernel: yes",
              "btf": "btf: yes", "kfunc": "kfunc: yes", "dpath": "dpath: yes",
              "uprobe_refcount": "uprobe refcount (depends on Build:bcc bpf_attach_uprobe refcount): yes",
              "signal": "send_signal: yes", "iter:task": "iter:task: yes",
              "iter:task_file": "iter:task_file: yes",
              "libpath_resolv": "bcc library path resolution: yes",
              "dwarf": "libdw (DWARF support): yes", "kprobe_multi": "kprobe_multi: yes",
              "skboutput": "skboutput: yes"}
    feats = {k: v in out for k, v in probes.items()}
    feats["aot"] = False
    return feats


def skip_reason(case, feats, env_path):
    kernel = version_tuple(platform.release())
    if case["min_kernel"] and version_tuple(case["min_kernel"]) > kernel:
        return "min kernel"
    if case["max_kernel"] and version_tuple(case["max_kernel"]) < kernel:
        return "max kernel"
    for req in case["requires"]:
        if subprocess.call(req, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env={"PATH": env_path}) != 0:
            return "requires: " + req
    for f in case["features"]:
        want = not f.startswith("!")
        if feats.get(f.lstrip("!"), False) != want:
            return "feature: " + f
    return None


before_lock = threading.Lock()


def kill_group(p):
    if p and p.poll() is None:
        try:
            os.killpg(os.getpgid(p.pid), signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()


def run_case(case, tool, env_path, timeout_scale):
    """Returns (status, command, output). Status: pass, fail, timeout."""
    if case["run"]:
        cmd = case["run"].replace("{{BPFTRACE}}", tool)
    else:
        cmd = f"{tool} -e '{case['prog']}'"
    timeout = case.get("timeout", 5) * timeout_scale
    before = after = p = None
    output, timed_out = "", False
    try:
        if case["before"]:
            before = subprocess.Popen(case["before"], shell=True, preexec_fn=os.setsid,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            child = os.path.basename(case["before"].split()[-1])
            waited = 0.0
            while subprocess.call(["pidof", child], stdout=subprocess.DEVNULL) != 0:
                time.sleep(0.1)
                waited += 0.1
                if waited > timeout:
                    return "timeout", cmd, "BEFORE did not start"
            if "{{BEFORE_PID}}" in cmd:
                pid = subprocess.run(["pidof", child], capture_output=True, text=True).stdout.split()[0]
                cmd = cmd.replace("{{BEFORE_PID}}", pid)
        env = {"PATH": env_path, "test": case["name"], NOTIFY: "1",
               "__BPFTRACE_NOTIFY_AOT_PORTABILITY_DISABLED": "1", "BPFTRACE_VERIFY_LLVM_IR": "1"}
        env.update(case["env"])
        p = subprocess.Popen(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             env=env, preexec_fn=os.setsid, text=True, errors="replace", bufsize=1)
        chunks = []
        reader = threading.Thread(target=lambda: chunks.extend(iter(p.stdout.readline, "")))
        reader.start()
        # Like bpftrace's runner: ATTACH_TIMEOUT until the attach notice, then TIMEOUT.
        deadline = time.time() + ATTACH_TIMEOUT * timeout_scale
        attached = False
        while p.poll() is None and time.time() < deadline:
            if not attached and any(c == NOTIFY + "\n" for c in chunks):
                attached = True
                deadline = time.time() + timeout
                if case["after"]:
                    after = subprocess.Popen(case["after"], shell=True, preexec_fn=os.setsid,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.02)
        if p.poll() is None:
            timed_out = True
            os.killpg(os.getpgid(p.pid), signal.SIGTERM)
            try:
                p.wait(timeout=3)
            except subprocess.TimeoutExpired:
                kill_group(p)
        reader.join(timeout=5)
        output = "".join(chunks)
    finally:
        kill_group(before)
        kill_group(p)
        kill_group(after)
    found = re.search(case["expect"], output, re.M)
    if timed_out:
        return ("pass" if found else "timeout"), cmd, output
    if p.returncode != 0 and not case["will_fail"]:
        return "fail", cmd, output + f"\n[exit {p.returncode}]"
    return ("pass" if found else "fail"), cmd, output


def run_suite(cases, tool, env_path, jobs, timeout_scale, verbose, log):
    results = {}

    def one(case):
        if case.get("skip"):
            return case, ("skip", "", case["skip"])
        if case["before"]:
            with before_lock:
                return case, run_case(case, tool, env_path, timeout_scale)
        return case, run_case(case, tool, env_path, timeout_scale)

    serial = [c for c in cases if c["before"]]
    parallel = [c for c in cases if not c["before"]]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(one, c) for c in parallel]
        for c in serial:
            futures.append(pool.submit(one, c))
        for f in futures:
            case, (status, cmd, output) = f.result()
            results[case["id"]] = status
            log.write(f"[{status.upper():7}] {case['id']}\n")
            if status in ("fail", "timeout"):
                log.write(f"\tCommand: {cmd}\n\tExpected: {case['expect']}\n")
                log.write("\tOutput: " + output[-2000:].replace("\n", "\n\t        ") + "\n")
            log.flush()
            if verbose:
                print(f"[{status.upper():7}] {case['id']}", flush=True)
    return results


def as_bpftrace(gpubt):
    """gpubt under the file name `bpftrace` (a symlink in bin/ of the case folder, the current
    one), as it stands in bpftrace's place: the cases that read `comm` in BEGIN, which runs in
    the tracer itself, expect the tracer's own name, "bpftrace" (gpubt under its own name prints
    "gpubt" there, rightly)."""
    link = os.path.join(os.getcwd(), "bin", "bpftrace")
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.abspath(gpubt), link)
    return link


def run_tools(tools_dir, tool, is_gpubt):
    results = {}
    for f in sorted(os.listdir(tools_dir)):
        if not f.endswith(".bt"):
            continue
        args = [tool, "--dry-run"] if is_gpubt else [tool, "-d"]
        try:
            p = subprocess.run(args + [os.path.join(tools_dir, f)], capture_output=True, text=True,
                               timeout=60, errors="replace")
            ok = p.returncode == 0
            err = "" if ok else (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[0]
        except subprocess.TimeoutExpired:
            ok, err = False, "timeout"
        results[f] = {"ok": ok, "error": err}
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", help="a bpftrace source tree (tests/runtime, tools/)")
    ap.add_argument("--work", required=True, help="folder with testprogs/ and testlibs/ built")
    ap.add_argument("--gpubt", help="gpubt binary")
    ap.add_argument("--bpftrace", default="/usr/bin/bpftrace")
    ap.add_argument("--tools", default="gpubt,bpftrace", help="which to run: gpubt,bpftrace")
    ap.add_argument("--filter", default="*", help="glob on SUITE.NAME")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--timeout-scale", type=float, default=1.0)
    ap.add_argument("--out", default="/tmp/gpubt-conformance")
    ap.add_argument("--no-tools-check", action="store_true", help="skip tools/*.bt")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()

    runtime_dir = os.path.join(a.checkout, "tests", "runtime")
    os.makedirs(a.out, exist_ok=True)
    cases = [c for c in read_cases(runtime_dir) if fnmatch.fnmatch(c["id"], a.filter)]
    env_path = os.environ.get("PATH", "/usr/bin:/bin")
    feats = machine_features(a.bpftrace)
    os.chdir(a.work)  # cases name ./testprogs/... relative to bpftrace's build/tests
    os.makedirs("runtime", exist_ok=True)
    for sub in ("scripts", "outputs"):
        link = os.path.join("runtime", sub)
        if not os.path.exists(link):
            os.symlink(os.path.join(runtime_dir, sub), link)
    for c in cases:
        c["skip"] = skip_reason(c, feats, env_path)

    summary = {}
    tools = [t for t in a.tools.split(",") if t]
    for name in tools:
        binary = a.gpubt if name == "gpubt" else a.bpftrace
        if not binary:
            raise SystemExit("--gpubt is required to run gpubt")
        if name == "gpubt":
            binary = as_bpftrace(binary)
        with open(os.path.join(a.out, f"{name}.log"), "w") as log:
            res = run_suite(cases, binary, env_path, a.jobs, a.timeout_scale, a.verbose, log)
        json.dump(res, open(os.path.join(a.out, f"{name}.json"), "w"), indent=1, sort_keys=True)
        summary[name] = res
        if not a.no_tools_check:
            tr = run_tools(os.path.join(a.checkout, "tools"), binary, name == "gpubt")
            json.dump(tr, open(os.path.join(a.out, f"{name}-tools.json"), "w"), indent=1,
                      sort_keys=True)
            summary[name + "-tools"] = tr

    # A baseline from an earlier bpftrace run counts what bpftrace itself passes here.
    base_path = os.path.join(a.out, "bpftrace.json")
    base = summary.get("bpftrace") or (json.load(open(base_path)) if os.path.exists(base_path) else None)
    base_tools_path = os.path.join(a.out, "bpftrace-tools.json")
    base_tools = summary.get("bpftrace-tools") or (
        json.load(open(base_tools_path)) if os.path.exists(base_tools_path) else None)
    for name in tools:
        res = summary[name]
        counts = {s: sum(1 for v in res.values() if v == s) for s in ("pass", "fail", "timeout", "skip")}
        print(f"{name}: runtime cases: {counts['pass']} pass, {counts['fail']} fail, "
              f"{counts['timeout']} timeout, {counts['skip']} skipped (of {len(res)})")
        if base is not None and name != "bpftrace":
            ref = [k for k, v in base.items() if v == "pass" and k in res]
            ok = [k for k in ref if res[k] == "pass"]
            print(f"{name}: {len(ok)}/{len(ref)} of the cases bpftrace passes here")
        tr = summary.get(name + "-tools")
        if tr:
            good = [t for t, r in tr.items() if r["ok"]]
            line = f"{name}: tools: {len(good)}/{len(tr)} compile"
            if base_tools and name != "bpftrace":
                accepted = [t for t, r in base_tools.items() if r["ok"]]
                line += f" ({sum(1 for t in accepted if tr.get(t, {}).get('ok'))}/{len(accepted)} " \
                        "of those bpftrace accepts)"
            print(line)
    print(f"logs and per-case results: {a.out}")


if __name__ == "__main__":
    main()
