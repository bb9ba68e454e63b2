"""Does the dormant agent keep the PyTorch profiler from seeing the GPU (docs/gpu-probes.md)? The
same 20 matmuls profiled with torch.profiler (CUDA activity) without the agent and with it loaded
dormant (CUDA_INJECTION64_PATH): prints the CUDA kernel events each run recorded.
usage: profiler_beside_agent.py --agent PATH"""
import argparse
import os
import subprocess
import sys

PROG = r'''
import torch
from torch.profiler import ProfilerActivity, profile
x = torch.randn(1024, 1024, device="cuda")
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    for _ in range(20):
        x = x @ x
        x = x / x.norm()
    torch.cuda.synchronize()
print("kernel_events", sum(1 for e in prof.events() if e.device_type.name == "CUDA"))
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--agent', required=True)
    a = ap.parse_args()
    for label, env in (('no agent', {}), ('dormant agent', {'CUDA_INJECTION64_PATH': a.agent})):
        p = subprocess.run([sys.executable, '-c', PROG], capture_output=True, text=True,
                           timeout=300, env=dict(os.environ, **env))
        print(f'{label}: {p.stdout.strip()} (exit {p.returncode}) {p.stderr.strip()[-400:]!r}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
