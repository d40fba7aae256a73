#!/usr/bin/env python3
"""compare.py - read back what tests/gpu/run.sh brought from a GPU machine, on the development
machine, and print the figures docs/GPU-VALIDATION.md records.

    python3 tests/gpu/compare.py RES.TGZ [--cvc build/cvc] [--shared ../shared]
"""
import argparse, csv, glob, gzip, math, os, sqlite3, statistics as st, subprocess, sys, tarfile, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("res")
ap.add_argument("--cvc", default="build/cvc")
ap.add_argument("--shared", default="../shared")
ap.add_argument("--sustained", type=float, default=1.0,
                help="the GPU's sustained/burst matmul ratio (docs/MODELS.md 'Clocks'; H200 SXM 755/850 = "
                     "0.888): measured burst times are divided by it before the models, which price "
                     "the sustained clock, are compared with them")
a = ap.parse_args()
cvc = os.path.abspath(a.cvc)
xla_table = os.path.join(os.path.abspath(a.shared), "traces/xla-perf-tables/xla_matmul_perf_table.csv.gz")
w = tempfile.mkdtemp(prefix="cvc-gpu-")
with tarfile.open(a.res) as t:
    try:
        t.extractall(w, filter="data")
    except TypeError:  # a Python without extraction filters: the archive is our own
        t.extractall(w)
os.chdir(w)

def imp(db, src):
    subprocess.run([cvc, "import", "--db", db, src], check=True, capture_output=True)
    return sqlite3.connect(db)

def acts(c):
    return c.execute("SELECT s.value, coalesce(oc.name,'?'), a.kind, a.end_ns-a.start_ns FROM activities a "
                     "JOIN strings s ON s.id=a.name_id LEFT JOIN name_class nc ON nc.name_id=a.name_id "
                     "LEFT JOIN op_classes oc ON oc.id=nc.class_id").fetchall()

print("== 1: one step, two recorders")
if os.path.isdir("p_step") and os.path.exists("k_step.json.gz"):
    x, y = acts(imp("cvc.db", "p_step")), acts(imp("kin.db", "k_step.json.gz"))
    for kind in (1, 2, 3):
        print("kind %d: cvc %d, kineto %d" % (kind, sum(r[2] == kind for r in x), sum(r[2] == kind for r in y)))
    nx, ny = {r[0] for r in x}, {r[0] for r in y}
    print("distinct names: cvc %d, kineto %d, only in cvc %d, only in kineto %d" % (len(nx), len(ny), len(nx - ny), len(ny - nx)))
    for n in sorted(nx - ny)[:5]:
        print("   only cvc:", n[:120])
    for cl in sorted({r[1] for r in x + y}):
        cx = sum(r[3] for r in x if r[1] == cl and r[2] == 1) / 1e3
        cy = sum(r[3] for r in y if r[1] == cl and r[2] == 1) / 1e3
        if cx or cy:
            print("  kernels %-12s cvc %10.1f us  kineto %10.1f us  %+.2f%%" % (cl, cx, cy, 100 * (cx - cy) / cy if cy else 0))

    # NVTX steps on the GPU (materialize_project.c): each step's kernels
    p = subprocess.run([cvc, "analyze", "--db", "cvc.db", "--by", "step", "--step-regex", r"^step(\d+)$",
                        "--format", "csv"], capture_output=True, text=True)
    print("per step (NVTX, GPU-projected when the spool had API calls):")
    for r in csv.DictReader(p.stdout.splitlines()):
        print("   step %s: %s kernels, busy %.0f us, span %.0f us" % (
            r["step"], r["kernels"], float(r["busy_us"]), float(r["span_us"])))

print("== run_meta")
for d in sorted(glob.glob("p_*/*.db")):
    c = sqlite3.connect(d)
    m = dict(c.execute("SELECT key, value FROM run_meta").fetchall())
    n = c.execute("SELECT count(*) FROM activities").fetchone()[0]
    keys = ("cupti_flush_period_ms", "untimed_records", "lost_records", "unmatched_nvtx_markers",
            "cuda_init_result", "cupti_subscribe_result", "activity_enable_failures", "nvtx_ranges_on_gpu")
    print("%-34s %6d acts  " % (d, n) + " ".join("%s=%s" % (k, m[k]) for k in keys if k in m))

print("== 3 (issue 19): SIGKILL")
for k in sorted(glob.glob("*.kill")):
    t = float(open(k).read().split()[-1])
    c = sqlite3.connect(glob.glob(k[:-5] + "/*.db")[0])
    n, last = c.execute("SELECT count(*), max(end_ns) FROM activities").fetchone()
    print("%s: %d records, last %.2f s before the kill" % (k[:-5], n, t - last / 1e9))

print("== 4: runner against XLA's H100 table (time ratio, median by FLOPs)")
if os.path.exists("xlaout/gemm.r0.csv") and os.path.exists(xla_table):
    names = {"bf16xbf16->bf16": "bf16", "f8e4m3fnxf8e4m3fn->bf16": "fp8"}
    x = {(names[r["dtype"]], int(r["b"]), int(r["m"]), int(r["n"]), int(r["k"])): float(r["derived_time_us(=2bmnk/flops)"])
         for r in csv.DictReader(gzip.open(xla_table, "rt")) if r["device_key"] == "sm_90" and r["dtype"] in names}
    res = {(r["dtype"], int(r["b"]), int(r["m"]), int(r["n"]), int(r["k"])): float(r["time_us"])
           for r in csv.DictReader(open("xlaout/gemm.r0.csv"))}
    for d in ("bf16", "fp8"):
        ks = [k for k in res if k[0] == d and k in x]
        if not ks:
            continue
        print("%s: %d shapes, geomean %.3f" % (d, len(ks), math.exp(sum(math.log(res[k] / x[k]) for k in ks) / len(ks))))
        by = {}
        for k in ks:
            f = 2 * k[1] * k[2] * k[3] * k[4]
            by.setdefault(int(math.log10(f)), []).append((res[k] / x[k], f / res[k] / 1e6, f / x[k] / 1e6))
        for e in sorted(by):
            v = by[e]
            print("   1e%d FLOPs n=%3d ratio %.3f  GPU %5.0f TF/s  XLA-H100 %5.0f TF/s" % (
                e, len(v), st.median(r[0] for r in v), st.median(r[1] for r in v), st.median(r[2] for r in v)))
    with open("shapes.csv", "w") as f:
        f.write("m,n,k,b\n")
        for k in res:
            if k[0] == "bf16":
                f.write("%d,%d,%d,%d\n" % (k[2], k[3], k[4], k[1]))
    subprocess.run([cvc, "fit", "--db", "xla.db", "xlaout/gemm.r0.csv"], capture_output=True)
    sus = {k: v / a.sustained for k, v in res.items()}
    print("  models against the measurements / %.3f (the clock they price)" % a.sustained)
    gpu = next(csv.DictReader(open("xlaout/gemm.r0.csv")))["device_key"]
    for lab, db in (("built-in", None), ("calibrate fit", "cal.db"), ("in-sample fit", "xla.db")):
        cmd = [cvc, "predict", "gemm", "--csv", "shapes.csv", "--gpu", gpu, "--format", "csv"]
        if db:
            if not os.path.exists(db):
                continue
            cmd += ["--db", db] + (["--force"] if db == "xla.db" else [])  # in sample: gate or not
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            print("  %s: %s" % (lab, p.stderr.strip()))
            continue
        e = [(float(r["time_us"]) - sus[("bf16", int(r["b"]), int(r["m"]), int(r["n"]), int(r["k"]))]) /
             sus[("bf16", int(r["b"]), int(r["m"]), int(r["n"]), int(r["k"]))] for r in csv.DictReader(p.stdout.splitlines())]
        print("  %-14s on %d bf16 shapes: MAPE %.1f%% bias %+.1f%%" % (lab, len(e), 100 * sum(map(abs, e)) / len(e), 100 * st.mean(e)))
print("(extracted in %s)" % w)
