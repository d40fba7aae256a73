# DataLoader with 4 forked workers feeding GPU work until SIGTERM (gpu-checklist / GPU-VALIDATION #6).
import os, sys, torch
open(sys.argv[1], "w").write(str(os.getpid()))
class D(torch.utils.data.Dataset):
    def __len__(self): return 1 << 30
    def __getitem__(self, i): return torch.full((256, 256), float(i % 7))
dev = torch.device("cuda:0")
w = torch.randn(256, 256, device=dev)
torch.cuda.synchronize()
dl = torch.utils.data.DataLoader(D(), batch_size=8, num_workers=4)
n = 0
for xb in dl:
    y = xb.to(dev) @ w
    n += 1
    if n % 200 == 0:
        torch.cuda.synchronize()
        print("fork.py batches", n, flush=True)
