#!/usr/bin/env python3
"""README.md as a newcomer follows it: every command of its tour (the ```console blocks, `$ `
lines) runs as written, from the source folder, and exits 0; each output line the README shows
(blank lines and `...` aside) is in what the command really printed, with numbers (times,
thread ids, counts) left free. The two long commands (scripts/demo.sh, scripts/test.sh) are not
run: they must be in the README, exist and be executable. The README stays short (at most 185
lines) and names the pages it sends the reader to, which must exist.

Usage: run_readme.py --source DIR --build DIR. The commands say `build/`: where the build folder
is elsewhere, they run in a folder of links to the source folder's entries with `build` leading
to the real one.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

MAX_LINES = 185


def console_blocks(text):
    """[(command, [shown output lines])] of every ```console block, in order."""
    steps = []
    for block in re.findall(r"^```console\n(.*?)^```", text, re.M | re.S):
        for line in block.split("\n"):
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps and line.strip() and line.strip() != "...":
                steps[-1][1].append(line)
    return steps


def loose(line):
    """A line with its numbers free and its blanks collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"\d+", "N", line)).strip()


def workdir(source, build):
    if os.path.realpath(os.path.join(source, "build")) == os.path.realpath(build):
        return source, None
    tmp = tempfile.TemporaryDirectory(prefix="gpubt-readme-")
    for entry in os.listdir(source):
        if entry != "build":
            os.symlink(os.path.join(source, entry), os.path.join(tmp.name, entry))
    os.symlink(build, os.path.join(tmp.name, "build"))
    return tmp.name, tmp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    args = ap.parse_args()
    text = open(os.path.join(args.source, "README.md")).read()
    failed = 0

    def report(ok, name, detail=""):
        nonlocal failed
        print(f"[{'PASS' if ok else 'FAIL'}] {name}")
        if not ok:
            failed += 1
            print("  " + detail.replace("\n", "\n  "))

    lines = text.count("\n")
    report(lines <= MAX_LINES, f"README.md is {lines} lines (at most {MAX_LINES})")
    for script in ("scripts/demo.sh", "scripts/test.sh"):
        path = os.path.join(args.source, script)
        report(re.search(rf"^    {re.escape(script)}$", text, re.M) is not None
               and os.access(path, os.X_OK), f"{script}: shown on a line of its own, executable")
    for page in sorted(set(re.findall(r"`((?:docs|tools|runtime/cuda_agent)/[\w./-]+)`", text))):
        report(os.path.exists(os.path.join(args.source, page)), f"{page} exists")

    steps = console_blocks(text)
    report(len(steps) >= 5, f"the tour has {len(steps)} commands")
    cwd, keep = workdir(args.source, args.build)
    exports = []
    env = dict(os.environ)
    env.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="gpubt-xdg-"))  # lavapipe's
    for command, shown in steps:
        if command.startswith("export "):
            exports.append(command)
            continue
        r = subprocess.run(["bash", "-c", "\n".join(exports + [command])], cwd=cwd, env=env,
                           capture_output=True, text=True, timeout=120)
        out = r.stdout + r.stderr
        got = {loose(line) for line in out.split("\n")}
        missing = [line for line in shown if loose(line) not in got]
        report(r.returncode == 0 and not missing, f"$ {command}",
               f"exit {r.returncode}; lines the README shows but the command did not print: "
               f"{missing}\noutput: {out[-1500:]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
