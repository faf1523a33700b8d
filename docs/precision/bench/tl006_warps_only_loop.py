# TL006 precision study microbenchmark (see ../TL006.md): an argument that only sets a loop's trip count, under
# configs that differ in num_warps alone (no block size, one num_stages) -- does the config best at one count stay
# best at another? Two loop bodies: a direct convolution's channel loop (elementwise multiply-adds on a fixed tile,
# cmeraki's vit conv2d) and a GEMM-shaped K loop of fixed tiles. Every num_warps is timed at each count; the script
# prints, per count, the best num_warps and how the one best at the smallest count does there (ratio to the best).
import torch, triton, triton.language as tl
from timing import timed


@triton.jit
def channel_loop(x_ptr, w_ptr, out_ptr, C, HW, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c in range(C):
        for k in tl.static_range(9):
            x = tl.load(x_ptr + c * HW + offs + k, mask=offs + k < HW, other=0.0)
            acc += x * tl.load(w_ptr + c * 9 + k)
    tl.store(out_ptr + offs, acc, mask=offs < HW)


@triton.jit
def k_loop(a_ptr, b_ptr, c_ptr, K, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + offs_m[:, None] * K + (k0 + offs_k)[None, :])
        b = tl.load(b_ptr + (k0 + offs_k)[:, None] * N + offs_n[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


WARPS = (1, 2, 4, 8)


def report(name, results):
    counts = sorted(results)
    first = min(range(len(WARPS)), key=lambda i: results[counts[0]][i])
    for count in counts:
        times = results[count]
        best = min(range(len(WARPS)), key=lambda i: times[i])
        print(f"{name} count={count:5d} best num_warps={WARPS[best]} {times[best]:.4f} ms | num_warps={WARPS[first]} "
              f"(best at count={counts[0]}) {times[first]:.4f} ms | ratio {times[first] / times[best]:.2f}x", flush=True)


for HW in (224 * 224, 14 * 14 * 64):
    results = {}
    for C in (1, 3, 16, 64, 256):
        x = torch.randn(C * HW + 16, device="cuda")
        w = torch.randn(C * 9, device="cuda")
        out = torch.empty(HW, device="cuda")
        results[C] = [timed(lambda: channel_loop[(triton.cdiv(HW, 1024),)](x, w, out, C, HW, BLOCK=1024,
                                                                          num_warps=nw, num_stages=2)) for nw in WARPS]
    report(f"conv channels HW={HW}", results)

for M, N in ((4096, 4096), (512, 512)):
    results = {}
    for K in (64, 512, 4096):
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(M, N, device="cuda", dtype=torch.float32)
        results[K] = [timed(lambda: k_loop[(M // 128, N // 128)](a, b, c, K, N, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64,
                                                              num_warps=nw, num_stages=3)) for nw in WARPS]
    report(f"gemm K loop M=N={M}", results)
