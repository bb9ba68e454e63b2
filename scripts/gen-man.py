#!/usr/bin/env python3
"""Writes gpubt's man page (roff, section 8) from its own words: the sections of `gpubt --help`
(options by group, examples, environment) and the exit-status table of docs/exit-status.md,
with a name, description and pointers to the docs around them. The page is checked in as
docs/gpubt.8 and installed; tests/e2e/run_man.py regenerates it and fails when it drifts.

Usage: gen-man.py GPUBT SOURCE_DIR > docs/gpubt.8
"""
import re
import subprocess
import sys


def roff(text):
    """Text as roff: backslashes and leading dots or quotes escaped, dashes as minus signs."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r"^([.'])", r"\\&\1", text, flags=re.M)


def help_sections(gpubt):
    out = subprocess.run([gpubt, "--help"], capture_output=True, text=True, check=True).stdout
    sections, name = {}, None
    for line in out.split("\n")[1:]:
        m = re.match(r"^([A-Z][A-Z ]+):$", line)
        if m:
            name = m.group(1)
            sections[name] = []
        elif name:
            sections[name].append(line)
    return out.split("\n")[0], sections


def option_list(lines):
    """Indented "    -x ARG   text" lines, continued by deeper-indented ones, as .TP items."""
    out = []
    for line in lines:
        if not line.strip():
            continue
        m = re.match(r"^    (\S.*?)(?:  +(\S.*))?$", line)
        if line.startswith("     ") or not m:
            out.append(roff(line.strip()))
        elif m.group(1).endswith(":"):  # a sub-heading ("gpubt's:")
            out += [".PP", roff(m.group(1))]
        else:
            out += [".TP", "\\fB" + roff(m.group(1)) + "\\fR"]
            if m.group(2):
                out.append(roff(m.group(2)))
    return out


def exit_statuses(source):
    text = open(f"{source}/docs/exit-status.md").read()
    out = []
    for status, meaning in re.findall(r"^\| (\d) \| (.*) \|$", text, re.M):
        out += [".TP", f"\\fB{status}\\fR", roff(meaning.replace("`", ""))]
    return out


def main():
    gpubt, source = sys.argv[1], sys.argv[2]
    title, sec = help_sections(gpubt)
    version = re.search(r"v(\S+?):", title).group(1)
    page = [
        f'.TH GPUBT 8 "" "gpubt {version}" "System Manager\'s Manual"',
        ".SH NAME",
        "gpubt \\- bpftrace's language for machines with GPUs: host probes and gpu: probes "
        "in CUDA kernels and Vulkan shaders",
        ".SH SYNOPSIS",
    ]
    for line in sec.pop("USAGE"):
        if line.strip():
            page += [roff(line.strip()), ".br"]
    page += [
        ".SH DESCRIPTION",
        roff("gpubt compiles a bpftrace-like script to kernel eBPF for its host probes (uprobes "
             "on the CUDA runtime, CUDA driver and HIP libraries with typed arguments, "
             "tracepoints, BEGIN, END, interval, ...) and to PTX or SPIR-V for its gpu: probes, "
             "which run in every GPU thread of the kernels they name. Maps are shared; on exit "
             "they print as bpftrace 0.17 prints them."),
        ".PP",
        roff("A probe is KIND:TYPE:TARGET:FUNCTION: host: (which may be left out) or gpu:. "
             "gpubt -l lists probe points in a form that pastes back into a script; "
             "docs/reference.md lists every builtin and function per probe kind."),
    ]
    for name in list(sec):
        if name in ("ENVIRONMENT", "EXAMPLES", "SEE ALSO", "EXIT STATUS"):  # EXIT STATUS: exit-status.md's table
            continue
        page += [f'.SH "{name}"'] + option_list(sec.pop(name))
    page += [".SH EXAMPLES"]
    for line in sec.pop("EXAMPLES"):
        if line.strip():
            page += [".PP", ".nf", roff(line.strip()), ".fi"]
    page += [".SH ENVIRONMENT"] + option_list(sec.pop("ENVIRONMENT"))
    page += [".SH EXIT STATUS"] + exit_statuses(source)
    page += [
        ".SH FILES",
        ".TP", "\\fIPREFIX/lib/gpubt/libgpubt_agent.so\\fR",
        roff("the in-process CUDA agent (built where the CUDA Compute Sanitizer SDK is)"),
        ".TP", "\\fIPREFIX/lib/gpubt/gpubt_vulkan_layer.json\\fR",
        roff("the Vulkan layer's manifest, beside libgpubt_vulkan_layer.so"),
        ".TP", "\\fIPREFIX/share/gpubt/tools/*.bt\\fR",
        roff("the bundled tools, each a command of its own (#!/usr/bin/env gpubt)"),
        ".SH SEE ALSO",
        "\\fBbpftrace\\fR(8); the documentation in the source: README.md, docs/README.md, "
        "docs/reference.md, tools/README.md",
    ]
    sys.stdout.write("\n".join(page) + "\n")


if __name__ == "__main__":
    main()
