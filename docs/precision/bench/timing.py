# Shared by the TL006 probe scripts of this folder (run as `python docs/precision/bench/<script>.py`, which puts
# this folder on the import path).
import torch
from triton.testing import do_bench


def timed(f):
    """Milliseconds per call of `f`, or infinity for a config that does not compile or fit."""
    try:
        f(); torch.cuda.synchronize()
        return do_bench(f, warmup=25, rep=100)
    except Exception:
        return float("inf")
