# TL006 precision study microbenchmark (see ../TL006.md): a one-lane-per-element kernel (a 1-D block of rows,
# each lane doing its own work, like a per-row binary search or an elementwise map), autotuned over the block
# size and num_warps, with the row count left out of the key (round R318s, a 3DGS tile-intersection kernel).
# Does the config best at one row count stay best at another? Every config is timed at each count; the script
# prints, for each pair (tuned at a, run at b), how the config best at a does at b (ratio to the best at b).
import torch, triton, triton.language as tl
from timing import timed


@triton.jit
def search_rows(sorted_ptr, q_ptr, out_ptr, n_rows, n_sorted, ITERS: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = r < n_rows
    q = tl.load(q_ptr + r, mask=live, other=0)
    lo = tl.zeros([BLOCK], dtype=tl.int32)
    hi = tl.full([BLOCK], n_sorted, dtype=tl.int32)
    for _ in tl.static_range(ITERS):
        mid = (lo + hi) // 2
        v = tl.load(sorted_ptr + mid, mask=live & (mid < n_sorted), other=0)
        go = v < q
        lo = tl.where(go, mid + 1, lo)
        hi = tl.where(go, hi, mid)
    tl.store(out_ptr + r, lo, mask=live)


@triton.jit
def scale_rows(x_ptr, out_ptr, n_rows, BLOCK: tl.constexpr):
    r = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = r < n_rows
    tl.store(out_ptr + r, tl.load(x_ptr + r, mask=live) * 2.0 + 1.0, mask=live)


CONFIGS = [(block, warps) for block in (256, 512, 1024) for warps in (1, 2, 4)]
COUNTS = (1 << 12, 1 << 16, 1 << 20, 3 << 20, 1 << 24, 1 << 26)


def report(name, results):
    worst = 1.0
    for a in COUNTS:
        tuned = min(range(len(CONFIGS)), key=lambda i: results[a][i])
        ratios = []
        for b in COUNTS:
            best = min(results[b])
            ratios.append(results[b][tuned] / best)
        worst = max(worst, *ratios)
        print(f"{name} tuned at n={a:9d} -> config BLOCK={CONFIGS[tuned][0]} warps={CONFIGS[tuned][1]} ({results[a][tuned]:.4f} ms); "
              "at n=" + ", ".join(f"{b}: {r:.2f}x" for b, r in zip(COUNTS, ratios)), flush=True)
    print(f"{name}: worst ratio over all (tuned, run) pairs {worst:.2f}x", flush=True)


results = {}
sorted_keys = torch.sort(torch.randint(0, 1 << 30, (1 << 20,), device="cuda", dtype=torch.int32)).values
for n in COUNTS:
    queries = torch.randint(0, 1 << 30, (n,), device="cuda", dtype=torch.int32)
    out = torch.empty(n, device="cuda", dtype=torch.int32)
    results[n] = [timed(lambda: search_rows[(triton.cdiv(n, block),)](sorted_keys, queries, out, n, sorted_keys.numel(),
                                                                       ITERS=21, BLOCK=block, num_warps=warps))
                  for block, warps in CONFIGS]
report("binary search per row", results)

results = {}
for n in COUNTS:
    x = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    results[n] = [timed(lambda: scale_rows[(triton.cdiv(n, block),)](x, out, n, BLOCK=block, num_warps=warps))
                  for block, warps in CONFIGS]
report("elementwise per row", results)
