# TL006 precision study microbenchmark (see ../TL006.md): an unkeyed argument that only bounds the mask of a store
# after a GEMM's K loop (MoMoE's `Msave`: how many rows of the pre-activation the forward saves for the backward) --
# does the config best with nothing saved stay best with every row saved? A bf16 GEMM with the autotune configs'
# tile shapes, each timed with SAVE = 0 and SAVE = M at several shapes; the script prints, per shape, the best
# config of each and how the one best at SAVE = 0 does at SAVE = M (ratio to the best), and the reverse.
import torch, triton, triton.language as tl
from timing import timed


@triton.jit
def gemm_save(a_ptr, b_ptr, c_ptr, s_ptr, M, N, K, SAVE, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + offs_m[:, None] * K + (k0 + offs_k)[None, :], mask=offs_m[:, None] < M, other=0.0)
        b = tl.load(b_ptr + (k0 + offs_k)[:, None] * N + offs_n[None, :], mask=offs_n[None, :] < N, other=0.0)
        acc = tl.dot(a, b, acc)
    out = acc.to(c_ptr.dtype.element_ty)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(s_ptr + offs_m[:, None] * N + offs_n[None, :], out, mask=mask & (offs_m[:, None] < SAVE))
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], tl.where(out > 0, out, 0.0), mask=mask)


CONFIGS = [(128, 128, 64, 8, 3), (128, 64, 64, 4, 4), (64, 128, 64, 4, 4), (64, 64, 64, 4, 4), (128, 256, 64, 8, 3),
           (64, 64, 32, 2, 5)]  # (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages)

for M, N, K in ((8192, 4096, 4096), (4096, 1024, 512), (16384, 512, 128), (1024, 4096, 1024)):
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    c, s = (torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    times = {}
    for save in (0, M):
        times[save] = [timed(lambda: gemm_save[(triton.cdiv(M, bm), triton.cdiv(N, bn))](
            a, b, c, s, M, N, K, save, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=nw, num_stages=ns))
            for bm, bn, bk, nw, ns in CONFIGS]
    best = {k: min(range(len(CONFIGS)), key=lambda i: t[i]) for k, t in times.items()}
    print(f"M={M} N={N} K={K}: best SAVE=0 {CONFIGS[best[0]]} {times[0][best[0]]:.4f} ms, best SAVE=M "
          f"{CONFIGS[best[M]]} {times[M][best[M]]:.4f} ms | SAVE=0's best at SAVE=M {times[M][best[0]] / times[M][best[M]]:.2f}x, "
          f"SAVE=M's best at SAVE=0 {times[0][best[M]] / times[0][best[0]]:.2f}x", flush=True)
