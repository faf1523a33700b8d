# TL006 precision study microbenchmark (see ../TL006.md): an argument that only sets the trip count of a loop of
# step 1 with no tl.dot, under configs that tune the block of a grid axis and num_warps with one num_stages (the
# judged x38a look-alikes: an RWKV-4 WKV recurrence over time, a tensor-train core loop over a bond rank). Does the
# config best at one count stay best at the others? Every config is timed at every count; the script prints, per
# kernel and shape, the worst ratio over all pairs (count tuned at, count run at) of the config best at the first
# to the best at the second.
import itertools

import torch, triton, triton.language as tl
from timing import timed


@triton.jit
def recurrence(k_ptr, v_ptr, y_ptr, T, C, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < C
    num = tl.zeros((BLOCK,), dtype=tl.float32)
    den = tl.zeros((BLOCK,), dtype=tl.float32)
    for t in range(T):  # serial over time: the trip count is the only use of T
        k = tl.load(k_ptr + (b * T + t) * C + offs, mask=mask, other=0.0)
        v = tl.load(v_ptr + (b * T + t) * C + offs, mask=mask, other=0.0)
        e = tl.exp(k)
        num = num * 0.9 + e * v
        den = den * 0.9 + e
        tl.store(y_ptr + (b * T + t) * C + offs, num / (den + 1e-6), mask=mask)


@triton.jit
def rank_loop(a_ptr, out_ptr, L, R, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < L
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(R):  # the innermost count only repeats each program's 1-D load work
        acc += tl.load(a_ptr + r * L + offs, mask=mask, other=0.0) * (r + 1)
    tl.store(out_ptr + offs, acc, mask=mask)


CONFIGS = [(block, warps) for block in (32, 64, 128, 256, 512, 1024) for warps in (1, 2, 4, 8)]


def worst(name, results):
    counts = sorted(results)
    best = {c: min(range(len(CONFIGS)), key=lambda i: results[c][i]) for c in counts}
    ratios = [(results[run][best[tuned]] / results[run][best[run]], tuned, run)
              for tuned, run in itertools.product(counts, counts)]
    ratio, tuned, run = max(ratios)
    for c in counts:
        print(f"{name} count={c:5d} best BLOCK={CONFIGS[best[c]][0]:4d} warps={CONFIGS[best[c]][1]} "
              f"{results[c][best[c]]:.4f} ms", flush=True)
    print(f"{name}: worst {ratio:.2f}x (config best at count {tuned}, run at count {run})", flush=True)
    return ratio


summary = []
for B, C in ((8, 4096), (1, 1024), (64, 2048)):
    results = {}
    for T in (1, 16, 128, 1024):
        k = torch.randn(B * T * C, device="cuda") * 0.1
        v = torch.randn(B * T * C, device="cuda")
        y = torch.empty_like(v)
        results[T] = [timed(lambda: recurrence[(B, triton.cdiv(C, blk))](k, v, y, T, C, BLOCK=blk, num_warps=w,
                                                                         num_stages=2)) for blk, w in CONFIGS]
    summary.append((f"recurrence B={B} C={C}", worst(f"recurrence B={B} C={C}", results)))
for L in (1 << 14, 1 << 20):
    results = {}
    for R in (1, 2, 4, 16, 64):
        a = torch.randn(R * L, device="cuda")
        out = torch.empty(L, device="cuda")
        results[R] = [timed(lambda: rank_loop[(triton.cdiv(L, blk),)](a, out, L, R, BLOCK=blk, num_warps=w,
                                                                      num_stages=2)) for blk, w in CONFIGS]
    summary.append((f"rank loop L={L}", worst(f"rank loop L={L}", results)))
print("\n| kernel and shape | worst ratio (config tuned at one count, run at another) |")
print("|---|---|")
for name, ratio in summary:
    print(f"| {name} | {ratio:.2f}x |")
