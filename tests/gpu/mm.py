# bf16 GEMM speed by input values: does the calibrate runner's [1,2) fill run faster than random data?
import torch
def t(a, b, n=20):
    for _ in range(3): a @ b
    e0, e1 = torch.cuda.Event(True), torch.cuda.Event(True)
    torch.cuda.synchronize(); e0.record()
    for _ in range(n): a @ b
    e1.record(); torch.cuda.synchronize(); return e0.elapsed_time(e1) * 1e3 / n
for s in (4096, 8192):
    for name, f in (("randn", lambda: torch.randn(s, s, device="cuda", dtype=torch.bfloat16)),
                    ("uniform[1,2)", lambda: (1 + torch.rand(s, s, device="cuda")).to(torch.bfloat16)),
                    ("zeros", lambda: torch.zeros(s, s, device="cuda", dtype=torch.bfloat16))):
        a, b = f(), f(); us = t(a, b)
        print("mm %d^3 bf16 %-12s %9.1f us %6.0f TF/s" % (s, name, us, 2 * s**3 / us / 1e6), flush=True)
