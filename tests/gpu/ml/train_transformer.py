"""A transformer training step as users run it (nn.TransformerEncoderLayer d_model 512, 8 heads,
FFN 2048, batch 32x256, AdamW), deterministic, for the ML suite and the cost bench.
usage: train_transformer.py [--compile] [--steps N] [--bench [--bench-steps N]] [--profile OUT]
                            [--hold FILE]
Prints each step's loss as a float hex (bit-identical runs print the same lines); --bench also
prints the mean step time of 30 (--bench-steps) steps after 5 warm-up steps (CUDA events):
'step_ms X'. --profile runs the --steps steps under the PyTorch profiler (CUPTI) and writes every
kernel it recorded to OUT as JSON lines {"name": demangled name, "us": duration}. --hold: CUDA
initialized (an agent's control socket up), 'held' printed, nothing launched until FILE exists
(gpubt -p attaches meanwhile, and then sees every launch a profiled run records)."""
import argparse
from transformer_step import make_step, torch

ap = argparse.ArgumentParser()
ap.add_argument('--compile', action='store_true')
ap.add_argument('--steps', type=int, default=5)
ap.add_argument('--bench', action='store_true')
ap.add_argument('--bench-steps', type=int, default=30)
ap.add_argument('--profile')
ap.add_argument('--hold')
a = ap.parse_args()
if a.hold:
    import os, time
    torch.cuda.init()
    print('held', flush=True)
    while not os.path.exists(a.hold):
        time.sleep(0.05)
if a.profile:  # from the start, as gpubt -c sees the process: the model's set-up kernels too
    from torch.profiler import ProfilerActivity, profile
    prof = profile(activities=[ProfilerActivity.CUDA])
    prof.__enter__()
step = make_step()

if a.compile:
    step = torch.compile(step)


def train():
    for i in range(a.steps):
        print(f'loss {i} {step().item().hex()}', flush=True)


if a.profile:
    import json
    train()
    torch.cuda.synchronize()
    prof.__exit__(None, None, None)
    with open(a.profile, 'w') as out:
        for e in prof.events():
            if e.device_type.name == 'CUDA' and not e.name.startswith(('Memcpy', 'Memset')):
                out.write(json.dumps({'name': e.name, 'us': e.device_time}) + '\n')
else:
    train()
if a.bench:
    for _ in range(5):
        step()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(a.bench_steps):
        step()
    stop.record()
    torch.cuda.synchronize()
    print(f'step_ms {start.elapsed_time(stop) / a.bench_steps:.4f}')
