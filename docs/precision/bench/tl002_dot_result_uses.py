# TL002 precision study microbenchmark (run on one H200, Triton 3.6, torch 2.11; see ../TL002.md):
# a tl.dot-derived tile transposed into the second operand, elementwise transposes, a recurrent state transposed into the second operand.
# Each pair of MODEs computes the same result; the script prints both timings and their ratio.
import torch, triton, triton.language as tl
from triton.testing import do_bench
@triton.jit
def k(X, W, S, O, T, B: tl.constexpr, MODE: tl.constexpr):
    r = tl.arange(0, B)
    pid = tl.program_id(0)
    a = tl.load(X + r[:, None] * B + r[None, :])
    s = tl.load(S + r)
    acc = tl.zeros((B, B), tl.float32)
    h = tl.zeros((B, B), tl.float32)
    for t in range(T):
        w = tl.load(W + ((pid * T + t) % 64) * B * B + r[:, None] * B + r[None, :])
        if MODE == 0:
            cT = tl.exp(tl.dot(a, tl.trans(w)) * 0.01)
            acc += tl.dot(a, cT.to(tl.bfloat16))
        elif MODE == 1:
            c = tl.exp(tl.dot(w, tl.trans(a)) * 0.01)
            acc += tl.dot(a, tl.trans(c).to(tl.bfloat16))
        elif MODE == 2:
            acc += tl.trans(w) * s[None, :]
        elif MODE == 3:
            acc += tl.trans(w * s[:, None])
        elif MODE == 4:
            h += tl.dot(tl.trans(a), tl.trans(w))
            acc += tl.dot(a, h.to(tl.bfloat16))
        else:
            h += tl.dot(w, a)
            acc += tl.dot(a, tl.trans(h).to(tl.bfloat16))
    tl.store(O + pid * B * B + r[:, None] * B + r[None, :], acc)
names = ["B-op cT direct", "B-op trans(c)", "elt trans(w)*s", "elt trans(w*s)", "state hT direct", "state trans(h) B-op"]
P, T = 264, 512
for B, nw in ((64, 4), (128, 8)):
    X = torch.randn(B, B, device="cuda").bfloat16() * 0.1
    W = torch.randn(64 * B * B, device="cuda").bfloat16() * 0.1
    S = torch.rand(B, device="cuda")
    res = {}
    for m in range(6):
        O = torch.empty(P * B * B, device="cuda")
        f = lambda: k[(P,)](X, W, S, O, T, B=B, MODE=m, num_warps=nw, num_stages=3)
        f(); torch.cuda.synchronize()
        res[m] = (do_bench(f, warmup=50, rep=300), O.clone())
    for m in range(0, 6, 2):
        t0, o0 = res[m]; t1, o1 = res[m + 1]
        err = ((o0 - o1).abs().max() / o0.abs().max()).item()
        print(f"B={B} {names[m]:22s} {t0:.3f} ms | {names[m+1]:22s} {t1:.3f} ms | ratio {t1/t0:.2f}x | relerr {err:.1e}", flush=True)
