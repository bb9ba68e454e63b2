#!/usr/bin/env python3
"""Some of the GPU suite's cases alone (a rerun of what changed, on a machine where
scripts/gpu-e2e.sh built the programs and the agent): --cases launch_timer,hang,xid,block,mem_access
(bank_ncu: bank_conflicts against Nsight Compute, alone: ncu replays each kernel).
usage: run_cases.py --bin DIR --agent PATH [--gpubt G] --cases A,B"""
import argparse
import os
import sys

from bank_ncu_case import bank_ncu_case
from block_case import block_cases
from hang_case import hang_cases
from launch_timer_case import launch_timer_cases
from mem_access_case import mem_access_cases
from mem_ncu_case import mem_ncu_case
from xid_case import xid_case

CASES = {'launch_timer': launch_timer_cases, 'hang': hang_cases, 'xid': xid_case,
         'mem_ncu': mem_ncu_case, 'block': block_cases, 'mem_access': mem_access_cases,
         'bank_ncu': bank_ncu_case}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--bin', required=True)
    ap.add_argument('--agent', required=True)
    ap.add_argument('--gpubt')
    ap.add_argument('--src', default=os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    ap.add_argument('--cases', required=True)
    a = ap.parse_args()
    rows = []

    def row(name, status, detail):
        rows.append(status)
        print(f'[{"SKIP" if status is None else "PASS" if status else "FAIL"}] {name}: {detail}',
              flush=True)

    for name in a.cases.split(','):
        CASES[name](a, row)
    return 1 if any(r is False for r in rows) else 0


if __name__ == '__main__':
    sys.exit(main())
