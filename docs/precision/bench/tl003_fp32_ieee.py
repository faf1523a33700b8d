# TL003 precision study microbenchmark (see ../TL003.md, round x36a): does loading a GEMM's tiles through a TMA
# tensor descriptor instead of raw masked 2-D tl.load matter when the tl.dot is fp32 with input_precision="ieee"
# (an FMA dot on the CUDA cores, not the tensor cores)? Three fp32 findings were judged wrong for that reason; per
# docs/precision/rounds.md item 10 a judge's reading is not a measurement. Each variant is timed with the same
# tiles, warps and stages; the script prints the raw-load time over the descriptor time (above 1: TMA helps).
import torch, triton, triton.language as tl
from timing import timed


@triton.jit
def gemm_raw(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
             PRECISION: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK):
        offs_k = k + tl.arange(0, BK)
        a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :],
                    mask=(offs_m[:, None] < M) & (offs_k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + offs_k[:, None] * N + offs_n[None, :],
                    mask=(offs_k[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def gemm_desc(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
              PRECISION: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    off_m = tl.program_id(0) * BM
    off_n = tl.program_id(1) * BN
    offs_m = off_m + tl.arange(0, BM)
    offs_n = off_n + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK):
        acc = tl.dot(a_desc.load([off_m, k]), b_desc.load([k, off_n]), acc, input_precision=PRECISION)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def main():
    triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    print(torch.cuda.get_device_name(), "torch", torch.__version__, "triton", triton.__version__)
    print("precision  M x N x K            tiles      warps stages  raw ms   desc ms  raw/desc")
    for precision in ("ieee", "tf32"):
        for M, N, K in ((2048, 2048, 2048), (4096, 4096, 1024), (1024, 1024, 8192)):
            a = torch.randn(M, K, device="cuda")
            b = torch.randn(K, N, device="cuda")
            for BM, BN, BK, warps, stages in ((64, 64, 32, 4, 2), (64, 64, 32, 4, 3), (128, 64, 32, 8, 3)):
                grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
                c = torch.empty(M, N, device="cuda")
                times = []
                for kernel in (gemm_raw, gemm_desc):
                    times.append(timed(lambda: kernel[grid](a, b, c, M, N, K, BM, BN, BK, precision,
                                                            num_warps=warps, num_stages=stages)))
                    if times[-1] != float("inf"):
                        torch.testing.assert_close(c, a @ b, rtol=5e-2, atol=5e-1 if precision == "tf32" else 1e-2)
                print(f"{precision:9}  {M} x {N} x {K:<6}  {BM}x{BN}x{BK:<4} {warps:5} {stages:6}  "
                      f"{times[0]:7.3f}  {times[1]:7.3f}  {times[0] / times[1]:6.2f}x")


if __name__ == "__main__":
    main()
