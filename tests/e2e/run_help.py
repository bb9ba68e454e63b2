#!/usr/bin/env python3
"""--help's ENVIRONMENT section names every BPFTRACE_* and GPUBT_* variable the source reads
(a getenv call, or bpftrace_env.cpp's table), so that a new variable cannot go unlisted."""
import pathlib
import re
import subprocess
import sys

from case_list import case, run_main

# Set by gpubt for the programs it starts, never by a user.
INTERNAL = {"GPUBT_AGENT_CONFIG"}


def variables_read(root):
    names = set()
    for path in root.glob("*/**/*.cpp"):
        if "tests" in path.parts or "build" in path.parts:
            continue
        text = path.read_text(errors="replace")
        names |= set(re.findall(r'getenv\("((?:GPUBT|BPFTRACE)_[A-Z0-9_]+)"\)', text))
        if path.name == "bpftrace_env.cpp":
            names |= set(re.findall(r'"(BPFTRACE_[A-Z0-9_]+)"', text))
    return names - INTERNAL


@case
def environment_section_lists_every_variable(ctx):
    names = variables_read(pathlib.Path(ctx.source))
    assert len([n for n in names if n.startswith("GPUBT_")]) >= 6, names
    assert len([n for n in names if n.startswith("BPFTRACE_")]) >= 9, names
    r = subprocess.run([ctx.gpubt, "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    section = r.stdout[r.stdout.index("\nENVIRONMENT:\n"):]
    listed = set(re.findall(r"^    ((?:GPUBT|BPFTRACE)_[A-Z0-9_]+)", section, re.M))
    assert listed == names, f"read but not listed: {sorted(names - listed)}; listed but not " \
                            f"read: {sorted(listed - names)}"


if __name__ == "__main__":
    sys.exit(run_main("--source"))
