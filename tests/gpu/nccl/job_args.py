"""The options ddp_job.py and its stand-in fake_job.py share (nccl_suite.py passes them)."""
import argparse


def job_parser():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--straggle-step", type=int, default=-1)
    ap.add_argument("--straggle-s", type=float, default=2.0)
    return ap
