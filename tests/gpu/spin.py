# Launches matmuls for SECONDS s, printing elapsed time each second (GPU-VALIDATION #3: SIGKILL at 5 s).
import os, sys, time, torch
open(sys.argv[1], "w").write(str(os.getpid()))
secs = float(sys.argv[2])
a = torch.randn(2048, 2048, device="cuda")
torch.cuda.synchronize()
t0 = time.time(); last = 0
while time.time() - t0 < secs:
    b = a @ a
    torch.cuda.synchronize()
    if time.time() - t0 - last >= 1:
        last = int(time.time() - t0); print("spin.py %d s" % last, flush=True)
