"""A list of end-to-end cases written as Python functions (run_hardening.py, run_timeline.py):
each returns None (pass) or "SKIP", or raises; every case runs and reports."""

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def run_cases(ctx, name_filter=""):
    """Runs CASES whose name contains NAME_FILTER with CTX; returns the exit status."""
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    for fn in CASES:
        if name_filter and name_filter not in fn.__name__:
            continue
        try:
            status = fn(ctx) or "PASS"
            detail = ""
        except Exception as e:  # noqa: BLE001 - a failed case reports and the others run
            status, detail = "FAIL", f"{type(e).__name__}: {e}"
        counts[status] += 1
        print(f"[{status}] {fn.__name__}" + (f"\n  {detail}" if detail else ""), flush=True)
    print(f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
    return 1 if counts["FAIL"] else 0


def run_main(*options):
    """A runner's main: --gpubt, each of OPTIONS ("--programs"...) required, --filter; runs CASES."""
    import argparse
    ap = argparse.ArgumentParser()
    for name in ("--gpubt",) + options:
        ap.add_argument(name, required=True)
    ap.add_argument("--filter", default="")
    ctx = ap.parse_args()
    return run_cases(ctx, ctx.filter)
