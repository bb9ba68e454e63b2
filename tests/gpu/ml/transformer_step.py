"""The transformer training step the ML suite, the cost bench and the attach suite run
(nn.TransformerEncoderLayer d_model 512, 8 heads, FFN 2048, batch 32x256, AdamW), deterministic:
make_step() builds it (seeded) and returns the function that runs one step and returns its loss."""
import os
os.environ.setdefault('CUBLAS_WORKSPACE_CONFIG', ':4096:8')
import torch


def make_step():
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
    return step
