#!/usr/bin/env python3
"""--help's ENVIRONMENT section names every BPFTRACE_* and GPUBT_* variable the source reads
(a getenv call, or bpftrace_env.cpp's table), so that a new variable cannot go unlisted; its
options are grouped and name every option the parser takes; the man page (docs/gpubt.8, made
from --help by scripts/gen-man.py) is what the generator makes now and renders without a
warning; the bash completion, run through bash's `complete`, offers what --help lists."""
import os
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
    # A variable named once for its readers (abi::kAgentModeVar: the agent and gpubt both).
    for path in root.glob("runtime/abi/*.h"):
        names |= set(re.findall(r'constexpr char k\w*Var\[\] = "(GPUBT_[A-Z0-9_]+)"',
                                path.read_text(errors="replace")))
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


def help_text(ctx):
    r = subprocess.run([ctx.gpubt, "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def options_parsed(root):
    """Every option driver/ hands getopt_long: long names and short letters."""
    names = set()
    for path in (root / "driver").glob("*.cpp"):
        text = path.read_text()
        names |= {"--" + n for n in re.findall(r'\{"([a-z][a-z-]*)", (?:no|required)_argument', text)}
        for short in re.findall(r'(?:short_opts = std::string\(|kBpftraceShortOptions\[\] = )"([^"]+)"', text):
            names |= {"-" + c for c in short if c != ":"}
    return names


@case
def help_groups_options_and_lists_every_one(ctx):
    text = help_text(ctx)
    groups = re.findall(r"^([A-Z][A-Z ]+):$", text, re.M)
    for g in ("USAGE", "WHAT TO TRACE", "OUTPUT", "GPU PROBES", "COMPILING AND CHECKING",
              "MESSAGES AND INFORMATION", "EXAMPLES", "ENVIRONMENT"):
        assert g in groups, f"no {g} group in --help: {groups}"
    parsed = options_parsed(pathlib.Path(ctx.source))
    assert {"--dry-run", "--timeline", "--info", "-e", "-q", "-B"} <= parsed, parsed
    listed = set(re.findall(r"^    (-[-\w]+)(?:, (-[-\w]+))?", text, re.M))
    listed = {n for pair in listed for n in pair if n}
    missing = sorted(parsed - listed)
    assert not missing, f"parsed but not in --help: {missing}"
    examples = text[text.index("\nEXAMPLES:\n"):text.index("\nENVIRONMENT:\n")]
    assert examples.count("    gpubt ") >= 5, examples


@case
def man_page_is_generated_from_help_and_renders(ctx):
    root = pathlib.Path(ctx.source)
    made = subprocess.run([sys.executable, str(root / "scripts/gen-man.py"), ctx.gpubt,
                           str(root)], capture_output=True, text=True, check=True).stdout
    assert made == (root / "docs/gpubt.8").read_text(), \
        "docs/gpubt.8 is out of date: scripts/gen-man.py build/gpubt . > docs/gpubt.8"
    r = subprocess.run(["man", "--warnings", "-l", str(root / "docs/gpubt.8")],
                       capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING="", LC_ALL="C.UTF-8"))
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    for heading in ("SYNOPSIS", "GPU PROBES", "EXAMPLES", "ENVIRONMENT", "EXIT STATUS"):
        assert re.search(rf"^{heading}$", r.stdout, re.M), f"no {heading} in the rendered page"
    assert "--gpu-backend=B" in r.stdout and "GPUBT_VULKAN_LAYER_DIR" in r.stdout


def complete(ctx, *words, current=None):
    """What the completion offers for WORDS (the last one being typed), run as bash runs it."""
    root = pathlib.Path(ctx.source)
    words = list(words)
    script = (f"source {root / 'completion/gpubt'}\n"
              "complete -p gpubt >/dev/null || exit 9\n"
              f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
              "COMP_LINE=\"${COMP_WORDS[*]}\"; COMP_POINT=${#COMP_LINE}\n"
              "$(complete -p gpubt | sed -n 's/.*-F \\([^ ]*\\).*/\\1/p') gpubt\n"
              "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    env = dict(os.environ, PATH=os.path.dirname(ctx.gpubt) + ":" + os.environ["PATH"])
    r = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, text=True,
                       timeout=30, cwd=ctx.source, env=env)
    assert r.returncode == 0, f"bash: {r.returncode} {r.stderr}"
    return set(r.stdout.split())


@case
def bash_completion_offers_options_values_and_tools(ctx):
    listed = set(re.findall(r"^    (--[-\w]+=?)", help_text(ctx), re.M))
    assert complete(ctx, "gpubt", "--") >= listed, listed - complete(ctx, "gpubt", "--")
    assert complete(ctx, "gpubt", "--gpu-b") == {"--gpu-backend="}
    assert complete(ctx, "gpubt", "--gpu-backend=") == {"auto", "ptx", "sass"}
    assert complete(ctx, "gpubt", "-f", "j") == {"json", "json-keys"}
    assert complete(ctx, "gpubt", "-B", "") == {"line", "full", "none"}
    assert "tools/kerneltime.bt" in complete(ctx, "gpubt", "tools/kern")
    assert complete(ctx, "gpubt", "ag") == {"agent"}
    assert complete(ctx, "gpubt", "agent", "") == {"env", "--help"}
    assert str(os.getpid()) in complete(ctx, "gpubt", "-p", str(os.getpid())[:-1])


if __name__ == "__main__":
    sys.exit(run_main("--source"))
