"""A cuBLAS GEMM through PyTorch (SASS-only kernels from the wheel): prints a checksum of the
result and, with --bench N, the mean time of N 4096x4096 fp32 matmuls (ms, CUDA events)."""
import hashlib, sys
import torch

torch.manual_seed(0)
n = 4096 if '--bench' in sys.argv else 1024
a = torch.randn(n, n, device='cuda')
b = torch.randn(n, n, device='cuda')
c = a @ b
torch.cuda.synchronize()
print('checksum', hashlib.sha256(c.cpu().numpy().tobytes()).hexdigest()[:16])
if '--bench' in sys.argv:
    reps = int(sys.argv[sys.argv.index('--bench') + 1])
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        c = a @ b
    stop.record()
    torch.cuda.synchronize()
    print(f'gemm_ms {start.elapsed_time(stop) / reps:.4f}')
