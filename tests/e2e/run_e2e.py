#!/usr/bin/env python3
"""Runs gpubt end-to-end test files (see directives.py) against real processes and the kernel."""
import argparse
import glob
import os
import re
import shlex
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from directives import parse_cases  # noqa: E402


def run_case(case, gpubt, programs):
    source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sub = lambda s: s.replace("{programs}", programs).replace("{source}", source)
    for req in case.get("REQUIRES", []):
        if subprocess.run(sub(req), shell=True, capture_output=True).returncode != 0:
            return "SKIP", f"requires: {req}"
    background = None
    if "BACKGROUND" in case:
        background = subprocess.Popen(shlex.split(sub(case["BACKGROUND"])),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.2)
        sub = lambda s, _sub=sub: _sub(s).replace("{bgpid}", str(background.pid))
    try:
        return run_gpubt(case, gpubt, sub)
    finally:
        if background:
            background.kill()
            background.wait()


def run_gpubt(case, gpubt, sub):
    cmd = [gpubt] + shlex.split(sub(case.get("ARGS", "")))
    if "PROG" in case:
        cmd += ["-e", sub(case["PROG"])]
    cmd += shlex.split(sub(case.get("PARAMS", "")))
    timeout = float(case.get("TIMEOUT", 10))
    env = dict(os.environ)
    for kv in case.get("ENV", []):
        key, _, value = sub(kv).partition("=")
        env[key] = value
    stdin = "".join(line + "\n" for line in case["STDIN"]) if "STDIN" in case else None
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            errors="replace", env=env,
                            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL)
    if "SIGINT_AFTER" in case:
        try:
            proc.wait(float(case["SIGINT_AFTER"]))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
    try:
        stdout, stderr = proc.communicate(input=stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, _ = proc.communicate()
        return "FAIL", f"timed out after {timeout}s\ncommand: {shlex.join(cmd)}\nstdout:\n{stdout}"
    p = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    out_lines = p.stdout.splitlines()
    err_lines = p.stderr.splitlines()
    problems = []
    want_exit = int(case.get("EXPECT_EXIT", 0))
    if p.returncode != want_exit:
        problems.append(f"exit status {p.returncode}, expected {want_exit}")
    for e in case.get("EXPECT", []):
        if sub(e) not in out_lines:
            problems.append(f"missing line: {e!r}")
    for e in case.get("EXPECT_REGEX", []):
        if not any(re.fullmatch(e, line) for line in out_lines):
            problems.append(f"no line matches: {e!r}")
    for e in case.get("EXPECT_NONE", []):
        if sub(e) in out_lines:
            problems.append(f"unexpected line: {e!r}")
    for e in case.get("STDERR", []):
        if sub(e) not in err_lines:
            problems.append(f"missing stderr line: {e!r}")
    for e in case.get("STDERR_REGEX", []):
        if not any(re.fullmatch(sub(e), line) for line in err_lines):
            problems.append(f"no stderr line matches: {e!r}")
    for e in case.get("STDERR_REGEX_NONE", []):
        if any(re.fullmatch(sub(e), line) for line in err_lines):
            problems.append(f"unexpected stderr line matches: {e!r}")
    if problems:
        return "FAIL", "\n".join(problems) + f"\ncommand: {shlex.join(cmd)}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return "PASS", ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpubt", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--filter", default="")
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()
    files = []
    for p in a.paths:
        files += sorted(glob.glob(os.path.join(p, "*.test"))) if os.path.isdir(p) else [p]
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    for f in files:
        for case in parse_cases(f):
            name = case.get("NAME", case["FILE"])
            if a.filter and a.filter not in name:
                continue
            status, detail = run_case(case, a.gpubt, a.programs)
            counts[status] += 1
            print(f"[{status}] {name}" + (f" ({detail})" if status == "SKIP" else ""))
            if status == "FAIL":
                print("  " + detail.replace("\n", "\n  "))
    print(f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
