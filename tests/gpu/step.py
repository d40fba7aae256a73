# One short training step loop: GEMMs (Linear), LayerNorm, GELU, AdamW, and an
# all-reduce of the gradients over a single-rank NCCL group.  Modes:
#   step.py plain            the steps, no profiler
#   step.py kineto OUT.json  the same steps, all inside torch.profiler (Kineto)
#   step.py graph            one all-reduce + matmul captured in a CUDA graph, replayed 10x
import os, sys, time
import torch, torch.distributed as dist

mode = sys.argv[1]
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29517")

def steps():
    dev = torch.device("cuda:0")
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=dev)
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4096, 16384), torch.nn.GELU(),
                            torch.nn.Linear(16384, 4096), torch.nn.LayerNorm(4096)).to(dev, torch.bfloat16)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    x = torch.randn(8192, 4096, device=dev, dtype=torch.bfloat16)
    ts = []
    for i in range(8):
        torch.cuda.synchronize(); t = time.perf_counter()
        with torch.cuda.nvtx.range("step%d" % i):
            loss = m(x).float().pow(2).mean()
            loss.backward()
            flat = torch.cat([p.grad.reshape(-1) for p in m.parameters()])
            dist.all_reduce(flat)
            out = torch.empty(flat.numel(), device=dev, dtype=flat.dtype)
            dist.all_gather_into_tensor(out, flat)
            opt.step()
            opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize(); ts.append(time.perf_counter() - t)
    print("steps 3-7 mean %.3f ms" % (1e3 * sum(ts[3:]) / len(ts[3:])), flush=True)
    dist.destroy_process_group()

def graph():
    dev = torch.device("cuda:0")
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=dev)
    a = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
    g = torch.zeros(64 << 20, device=dev, dtype=torch.bfloat16)
    out = torch.empty_like(g)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            b = a @ a
            dist.all_reduce(g)
            dist.all_gather_into_tensor(out, g)
    torch.cuda.current_stream().wait_stream(s)
    cg = torch.cuda.CUDAGraph()
    with torch.cuda.graph(cg):
        b = a @ a
        dist.all_reduce(g)
        dist.all_gather_into_tensor(out, g)
    for _ in range(10):
        cg.replay()
    torch.cuda.synchronize()
    dist.destroy_process_group()

t0 = time.time()
if mode == "plain":
    steps()
elif mode == "kineto":
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        steps()
    p.export_chrome_trace(sys.argv[2])
elif mode == "graph":
    graph()
print("step.py %s: %.2f s, torch %s, nccl %s" % (mode, time.time() - t0, torch.__version__,
      ".".join(map(str, torch.cuda.nccl.version()))), flush=True)
