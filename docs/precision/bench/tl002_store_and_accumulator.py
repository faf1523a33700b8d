# TL002 precision study microbenchmark (run on one H200, Triton 3.6, torch 2.11; see ../TL002.md):
# a tl.dot result stored transposed, an accumulator transposed around a tl.dot.
# Each pair of MODEs computes the same result; the script prints both timings and their ratio.
import torch, triton, triton.language as tl
from triton.testing import do_bench
@triton.jit
def k(X, W, O, O2, T, B: tl.constexpr, MODE: tl.constexpr):
    r = tl.arange(0, B)
    pid = tl.program_id(0)
    a = tl.load(X + r[:, None] * B + r[None, :])
    acc = tl.zeros((B, B), tl.float32)
    for t in range(T):
        w = tl.load(W + ((pid * T + t) % 64) * B * B + r[:, None] * B + r[None, :])
        o2 = O2 + (pid * 8 + t % 8) * B * B + r[:, None] * B + r[None, :]
        if MODE == 0:
            acc = tl.dot(a, tl.trans(w), acc)
        elif MODE == 1:
            acc = tl.trans(tl.dot(w, tl.trans(a), tl.trans(acc)))
        elif MODE == 2:
            tl.store(o2, tl.dot(tl.trans(w), tl.trans(a)))
        else:
            tl.store(o2, tl.trans(tl.dot(a, w)))
    tl.store(O + pid * B * B + r[:, None] * B + r[None, :], acc)
names = ["acc=dot(a,w^T,acc)", "acc=trans(dot(w,a^T,acc^T))", "store dot(w^T,a^T)", "store trans(dot(a,w))"]
P, T = 264, 512
for B, nw in ((64, 4), (128, 8)):
    X = torch.randn(B, B, device="cuda").bfloat16() * 0.1
    W = torch.randn(64 * B * B, device="cuda").bfloat16() * 0.1
    res = {}
    for m in range(4):
        O = torch.zeros(P * B * B, device="cuda")
        O2 = torch.zeros(P * 8 * B * B, device="cuda")
        f = lambda: k[(P,)](X, W, O, O2, T, B=B, MODE=m, num_warps=nw, num_stages=3)
        f(); torch.cuda.synchronize()
        res[m] = (do_bench(f, warmup=50, rep=300), O.clone() + O2.clone().sum())
    for m in range(0, 4, 2):
        t0, o0 = res[m]; t1, o1 = res[m + 1]
        err = ((o0 - o1).abs().max() / o0.abs().max()).item()
        print(f"B={B} {names[m]:28s} {t0:.3f} ms | {names[m+1]:28s} {t1:.3f} ms | ratio {t1/t0:.2f}x | relerr {err:.1e}", flush=True)
