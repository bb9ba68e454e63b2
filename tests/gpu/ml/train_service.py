"""The transformer training step of train_transformer.py as a long-lived job that gpubt attaches
to: it trains only when told on stdin ('burst N': N steps; 'quit'), so a test knows which steps ran
while gpubt was attached. Prints 'ready PID' once CUDA is up (--hold: 'cuda PID' first, with CUDA initialized and nothing
launched yet, then waits for a line), then per burst
'burst I ms MEAN_STEP_MS losses HEX,...' (CUDA events; losses as float hex, bit-comparable)."""
import os, sys
os.environ.setdefault('CUBLAS_WORKSPACE_CONFIG', ':4096:8')
import torch

if '--hold' in sys.argv:  # CUDA up (the agent listening), nothing launched: wait for a line
    torch.cuda.init()
    print('cuda', os.getpid(), flush=True)
    sys.stdin.readline()
torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
model = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048,
                                         batch_first=True).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(32, 256, 512, device='cuda')
target = torch.randn(32, 256, 512, device='cuda')


def step():
    loss = torch.nn.functional.mse_loss(model(x), target)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


torch.cuda.synchronize()
print('ready', os.getpid(), flush=True)
start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
for i, line in enumerate(sys.stdin):
    words = line.split()
    if not words or words[0] != 'burst':
        break
    n = int(words[1])
    torch.cuda.synchronize()
    start.record()
    losses = [step() for _ in range(n)]
    stop.record()
    torch.cuda.synchronize()
    print(f'burst {i} ms {start.elapsed_time(stop) / n:.4f} losses '
          + ','.join(l.item().hex() for l in losses), flush=True)
