#!/usr/bin/env python3
"""Runs bpftrace's own runtime test cases (tests/runtime of a bpftrace checkout: tag v0.17.0, or
its head) with gpubt and/or the installed bpftrace in bpftrace's place, and its bundled tools/*.bt
through `gpubt --dry-run` (and `bpftrace -d`). Prints pass counts; writes per-case results as JSON.

The case files are bpftrace's, read where they lie; none of them is copied into this repository.
bpftrace_cases.py reads either format; the meaning follows the checkout's own runner: every
EXPECT* must hold on stdout+stderr; the run must exit 0 (head: RETURN_CODE) unless WILL_FAIL or
it timed out; TIMEOUT counts from the moment probes are attached. At head, PROG runs with
--verify-llvm-ir (and `-q -f json` for an EXPECT_JSON), as bpftrace's runner runs it.
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

from bpftrace_cases import is_language_case, read_cases

ATTACH_TIMEOUT = 5
NOTIFY = "__BPFTRACE_NOTIFY_PROBES_ATTACHED"


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
    env_has = case["skip_if_env_has"]
    if env_has and os.environ.get(env_has[0], "") == env_has[1]:
        return "env: " + "=".join(env_has)
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


def case_command(case, tool, fmt):
    if fmt == "head":  # as bpftrace's runner at head builds it (engine/runner.py)
        if case["run"]:
            return case["run"].replace("{{BPFTRACE}}", tool + " --verify-llvm-ir")
        json_flags = "-q -f json " if case["expects"] and case["expects"][0][0] == "json" else ""
        prog = case["prog"].replace("'", "'\\''")
        return f"{tool} {json_flags}--verify-llvm-ir -e '{prog}'"
    if case["run"]:
        return case["run"].replace("{{BPFTRACE}}", tool)
    return f"{tool} -e '{case['prog']}'"


def expect_holds(mode, text, output, case):
    if mode == "text":
        return re.search(f"^\\s*{re.escape(text)}\\s*$", output, re.M)
    if mode == "text_none":
        return not re.search(f"^\\s*{re.escape(text)}\\s*$", output, re.M)
    if mode == "regex":
        return re.search(text, output, re.M)
    if mode == "regex_none":
        return not re.search(text, output, re.M)
    try:
        want = open(text).read().strip()
    except OSError:
        return False
    if mode == "file":
        if case["localize_ts"] >= 0:
            want = time.strftime(want, time.localtime(case["localize_ts"]))
        return output.strip() == want
    try:  # json: one document, or .ndjson line by line
        got = output.strip().splitlines()
        if text.endswith(".ndjson"):
            lines = want.splitlines()
            return len(lines) == len(got) and all(json.loads(a) == json.loads(b)
                                                  for a, b in zip(lines, got))
        return len(got) == 1 and json.loads(got[0]) == json.loads(want)
    except ValueError:
        return False


def start_befores(case, cmd, timeout):
    """Starts the BEFORE programs and waits until each runs; returns (processes, cmd, error)."""
    procs = []
    for before in case["befores"]:
        procs.append(subprocess.Popen(before, shell=True, preexec_fn=os.setsid,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        child = os.path.basename(before.split()[-1])
        waited = 0.0
        while subprocess.call(["pidof", child], stdout=subprocess.DEVNULL) != 0:
            time.sleep(0.1)
            waited += 0.1
            if waited > timeout:
                return procs, cmd, "BEFORE did not start"
    if procs and "{{BEFORE_PID}}" in cmd:
        child = os.path.basename(case["befores"][0].split()[-1])
        pid = subprocess.run(["pidof", child], capture_output=True, text=True).stdout.split()[0]
        cmd = cmd.replace("{{BEFORE_PID}}", pid)
    return procs, cmd, None


def run_case(case, tool, env_path, timeout_scale, fmt):
    """Returns (status, command, output). Status: pass, fail, timeout."""
    cmd = case_command(case, tool, fmt)
    timeout = case.get("timeout", 5) * timeout_scale
    befores, after, p = [], None, None
    output, timed_out = "", False
    exact = any(m in ("file", "json") for m, _ in case["expects"])
    try:
        if case["setup"] and subprocess.call(case["setup"], shell=True) != 0:
            return "fail", cmd, "SETUP failed"
        befores, cmd, error = start_befores(case, cmd, timeout)
        if error:
            return "timeout", cmd, error
        env = {"PATH": env_path, "test": case["name"], NOTIFY: "1",
               "__BPFTRACE_NOTIFY_AOT_PORTABILITY_DISABLED": "1", "BPFTRACE_VERIFY_LLVM_IR": "1"}
        if fmt == "head":  # gpubt's text as bpftrace's head lays it out (bpftrace ignores it)
            env["GPUBT_OUTPUT_STYLE"] = "head"
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
            if not attached and NOTIFY + "\n" in chunks:
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
        if exact and NOTIFY + "\n" in chunks:  # an exact expectation starts after the notice
            chunks = chunks[chunks.index(NOTIFY + "\n") + 1:]
        output = "".join(chunks)
    finally:
        for b in befores:
            kill_group(b)
        kill_group(p)
        kill_group(after)
        if case["cleanup"]:
            subprocess.call(case["cleanup"], shell=True)
    found = all(expect_holds(m, t, output, case) for m, t in case["expects"])
    if timed_out:
        return ("pass" if found else "timeout"), cmd, output
    want_rc = case["return_code"]
    if case["will_fail"]:
        if p.returncode == 0 and fmt == "head":
            return "fail", cmd, output + "\n[exit 0, WILL_FAIL]"
    elif p.returncode != want_rc:
        return "fail", cmd, output + f"\n[exit {p.returncode}]"
    return ("pass" if found else "fail"), cmd, output


def run_suite(cases, tool, env_path, jobs, timeout_scale, verbose, log, fmt):
    results = {}

    def one(case):
        if case.get("skip"):
            return case, ("skip", "", case["skip"])
        if case["befores"]:
            with before_lock:
                return case, run_case(case, tool, env_path, timeout_scale, fmt)
        return case, run_case(case, tool, env_path, timeout_scale, fmt)

    serial = [c for c in cases if c["befores"]]
    parallel = [c for c in cases if not c["befores"]]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(one, c) for c in parallel]
        for c in serial:
            futures.append(pool.submit(one, c))
        for f in futures:
            case, (status, cmd, output) = f.result()
            results[case["id"]] = status
            log.write(f"[{status.upper():7}] {case['id']}\n")
            if status in ("fail", "timeout"):
                log.write(f"\tCommand: {cmd}\n\tExpected: {case['expects']}\n")
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
    ap.add_argument("--language", action="store_true",
                    help="only the language suites' cases that need begin/end/interval alone "
                         "(issue 29's measure, for a checkout at bpftrace's head)")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()

    runtime_dir = os.path.join(a.checkout, "tests", "runtime")
    os.makedirs(a.out, exist_ok=True)
    cases, fmt = read_cases(runtime_dir)
    cases = [c for c in cases if fnmatch.fnmatch(c["id"], a.filter)]
    if a.language:
        cases = [c for c in cases if is_language_case(c, runtime_dir)]
    env_path = os.environ.get("PATH", "/usr/bin:/bin")
    feats = machine_features(a.bpftrace)
    os.chdir(a.work)  # cases name ./testprogs/... relative to bpftrace's build/tests
    os.makedirs("runtime", exist_ok=True)
    for sub in ("scripts", "outputs"):
        link = os.path.join("runtime", sub)
        target = os.path.join(runtime_dir, sub)
        if os.path.lexists(link) and os.readlink(link) != target:
            os.remove(link)  # a checkout of another version ran here before
        if not os.path.lexists(link):
            os.symlink(target, link)
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
            res = run_suite(cases, binary, env_path, a.jobs, a.timeout_scale, a.verbose, log,
                            fmt)
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
