#!/usr/bin/env python3
"""Runs gpubt end-to-end test files (see directives.py) against real processes and the kernel."""
import argparse
import glob
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from directives import parse_cases  # noqa: E402


def run_case(case, gpubt, programs):
    sub = lambda s: s.replace("{programs}", programs)
    for req in case.get("REQUIRES", []):
        if subprocess.run(sub(req), shell=True, capture_output=True).returncode != 0:
            return "SKIP", f"requires: {req}"
    cmd = [gpubt] + shlex.split(sub(case.get("ARGS", "")))
    if "PROG" in case:
        cmd += ["-e", sub(case["PROG"])]
    timeout = float(case.get("TIMEOUT", 10))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           errors="replace", stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        return "FAIL", f"timed out after {timeout}s\nstdout:\n{e.stdout}"
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
