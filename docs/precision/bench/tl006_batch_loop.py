# TL006 precision study microbenchmark (see ../TL006.md): an argument that only bounds an untiled outer loop
# (`for b in range(B)`, step 1, each iteration the same keyed GEMM-shaped work) -- does the config that is best at
# one value stay best at another? Per-sample-gradient shape of Opacus' fused kernel: out = sum_b A[b]^T @ G[b].
# Every config is timed at each B; the script prints, for each B, the best config and how the config best at
# B=1 does there (ratio to that B's own best).
import itertools
import torch, triton, triton.language as tl
from triton.testing import do_bench


@triton.jit
def per_sample_sum(a_ptr, g_ptr, out_ptr, B, T, DIN, DOUT,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_T: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for b in range(B):
        for t0 in range(0, T, BLOCK_T):
            offs_t = t0 + tl.arange(0, BLOCK_T)
            a = tl.load(a_ptr + b * T * DIN + offs_t[:, None] * DIN + offs_m[None, :],
                        mask=(offs_t[:, None] < T) & (offs_m[None, :] < DIN), other=0.0)
            g = tl.load(g_ptr + b * T * DOUT + offs_t[:, None] * DOUT + offs_n[None, :],
                        mask=(offs_t[:, None] < T) & (offs_n[None, :] < DOUT), other=0.0)
            acc = tl.dot(tl.trans(a), g, acc)
    tl.store(out_ptr + offs_m[:, None] * DOUT + offs_n[None, :], acc,
             mask=(offs_m[:, None] < DIN) & (offs_n[None, :] < DOUT))


CONFIGS = [dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_T=bt, num_warps=w, num_stages=s)
           for bm, bn, bt, w, s in itertools.product((64, 128), (64, 128), (32, 64), (4, 8), (2, 3, 4))]
for T, DIN, DOUT in ((512, 1024, 1024), (64, 256, 256)):
    results = {}
    for B in (1, 8, 64):
        a = torch.randn(B, T, DIN, device="cuda", dtype=torch.bfloat16)
        g = torch.randn(B, T, DOUT, device="cuda", dtype=torch.bfloat16)
        out = torch.empty(DIN, DOUT, device="cuda", dtype=torch.float32)
        times = []
        for cfg in CONFIGS:
            grid = (triton.cdiv(DIN, cfg["BLOCK_M"]), triton.cdiv(DOUT, cfg["BLOCK_N"]))
            f = lambda: per_sample_sum[grid](a, g, out, B, T, DIN, DOUT, **cfg)
            try:
                f(); torch.cuda.synchronize()
                times.append(do_bench(f, warmup=25, rep=100))
            except Exception:  # a config that does not fit (shared memory)
                times.append(float("inf"))
        results[B] = times
    first = min(range(len(CONFIGS)), key=lambda i: results[1][i])
    for B, times in results.items():
        best = min(range(len(CONFIGS)), key=lambda i: times[i])
        print(f"T={T} DIN=DOUT={DIN} B={B:3d} best {CONFIGS[best]} {times[best]:.4f} ms | config best at B=1 "
              f"{times[first]:.4f} ms | ratio {times[first] / times[best]:.2f}x", flush=True)
