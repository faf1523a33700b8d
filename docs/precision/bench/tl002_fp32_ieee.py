# TL002 precision study microbenchmark (see ../TL002.md): a tl.dot-derived fp32 tile transposed into the first
# operand of a tl.dot written with input_precision="ieee" (fp32 FMA, no tensor cores), against the same result
# computed already transposed; the same pair with input_precision="tf32" (tensor cores) as the control.
# HSTU's backward shape: d_v += dot(trans(exp(dot(q, k^T))), d_o). Each pair of MODEs computes the same result;
# the script prints both timings and their ratio.
import torch, triton, triton.language as tl
from triton.testing import do_bench


@triton.jit
def k(Q, K, V, O, T, B: tl.constexpr, MODE: tl.constexpr):
    r = tl.arange(0, B)
    pid = tl.program_id(0)
    q = tl.load(Q + r[:, None] * B + r[None, :])
    acc = tl.zeros((B, B), tl.float32)
    for t in range(T):
        base = ((pid * T + t) % 64) * B * B
        kk = tl.load(K + base + r[:, None] * B + r[None, :])
        v = tl.load(V + base + r[:, None] * B + r[None, :])
        if MODE == 0:  # ieee, computed transposed: no transpose in the loop
            pT = tl.exp(tl.dot(kk, tl.trans(q), input_precision="ieee") * 0.01)
            acc += tl.dot(pT, v, input_precision="ieee")
        elif MODE == 1:  # ieee, dot result transposed into the first operand (what TL002 flags)
            p = tl.exp(tl.dot(q, tl.trans(kk), input_precision="ieee") * 0.01)
            acc += tl.dot(tl.trans(p), v, input_precision="ieee")
        elif MODE == 2:  # tf32 control, computed transposed
            pT = tl.exp(tl.dot(kk, tl.trans(q), input_precision="tf32") * 0.01)
            acc += tl.dot(pT, v, input_precision="tf32")
        else:  # tf32 control, dot result transposed into the first operand
            p = tl.exp(tl.dot(q, tl.trans(kk), input_precision="tf32") * 0.01)
            acc += tl.dot(tl.trans(p), v, input_precision="tf32")
    tl.store(O + pid * B * B + r[:, None] * B + r[None, :], acc)


names = ["ieee pT direct", "ieee trans(p) A-op", "tf32 pT direct", "tf32 trans(p) A-op"]
P, T = 264, 256
for B, nw in ((32, 4), (64, 4), (64, 8)):
    Q = torch.randn(B, B, device="cuda") * 0.1
    K = torch.randn(64 * B * B, device="cuda") * 0.1
    V = torch.randn(64 * B * B, device="cuda") * 0.1
    res = {}
    for m in range(4):
        O = torch.empty(P * B * B, device="cuda")
        f = lambda: k[(P,)](Q, K, V, O, T, B=B, MODE=m, num_warps=nw, num_stages=2)
        f(); torch.cuda.synchronize()
        res[m] = (do_bench(f, warmup=50, rep=300), O.clone())
    for m in (0, 2):
        t0, o0 = res[m]; t1, o1 = res[m + 1]
        err = ((o0 - o1).abs().max() / o0.abs().max()).item()
        print(f"B={B} warps={nw} {names[m]:18s} {t0:.3f} ms | {names[m+1]:20s} {t1:.3f} ms | ratio {t1/t0:.2f}x"
              f" | relerr {err:.1e}", flush=True)
