# TL006 precision study microbenchmark (see ../TL006.md): a loop-free elementwise kernel over 2-D tiles (bias + GELU
# + residual, caseyhird's triton_practice) whose unkeyed flag only adds a row vector's load, [1, BLOCK_N] beside the
# [BLOCK_M, BLOCK_N] tiles -- does the config best with the flag off stay best with it on? Every config of the
# kernel's own autotune list is timed with HAS_BIAS off and on, at several shapes; the script prints, per shape, the
# best config of each and how the one best without the bias does with it (ratio to the best), and the reverse.
import torch, triton, triton.language as tl
from timing import timed


@triton.jit
def bias_gelu_residual(x_ptr, b_ptr, r_ptr, y_ptr, M, N, HAS_BIAS: tl.constexpr, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr):
    off_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    off_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (off_m[:, None] < M) & (off_n[None, :] < N)
    offs = off_m[:, None] * N + off_n[None, :]
    z = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if HAS_BIAS:
        z += tl.load(b_ptr + off_n[None, :], mask=off_n[None, :] < N, other=0.0).to(tl.float32)
    g = z * tl.sigmoid(1.5957691216 * (z + 0.044715 * z * z * z))
    out = g + tl.load(r_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, out.to(y_ptr.dtype.element_ty), mask=mask)


CONFIGS = [(64, 128, 4, 2), (64, 256, 8, 2), (128, 128, 8, 2), (128, 256, 8, 3), (32, 256, 4, 2), (64, 64, 4, 2),
           (16, 128, 4, 1), (32, 64, 2, 1)]  # (BLOCK_M, BLOCK_N, num_warps, num_stages): the six of the kernel, and two small

for M, N, dtype in ((8192, 4096, torch.bfloat16), (65536, 1024, torch.bfloat16), (1024, 8192, torch.float32),
                    (256, 768, torch.float32)):
    x, r = (torch.randn(M, N, device="cuda", dtype=dtype) for _ in range(2))
    b = torch.randn(N, device="cuda", dtype=dtype)
    y = torch.empty_like(x)
    times = {}
    for has_bias in (False, True):
        times[has_bias] = [timed(lambda: bias_gelu_residual[(triton.cdiv(M, bm), triton.cdiv(N, bn))](
            x, b, r, y, M, N, HAS_BIAS=has_bias, BLOCK_M=bm, BLOCK_N=bn, num_warps=nw, num_stages=ns))
            for bm, bn, nw, ns in CONFIGS]
    best = {k: min(range(len(CONFIGS)), key=lambda i: t[i]) for k, t in times.items()}
    off_on = times[True][best[False]] / times[True][best[True]]
    on_off = times[False][best[True]] / times[False][best[False]]
    print(f"M={M} N={N} {str(dtype)[6:]}: best off {CONFIGS[best[False]]} {times[False][best[False]]:.4f} ms, best on "
          f"{CONFIGS[best[True]]} {times[True][best[True]]:.4f} ms | off's best run with bias {off_on:.2f}x, on's best "
          f"run without {on_off:.2f}x", flush=True)
