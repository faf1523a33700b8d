"""Files written for another accelerator's Triton backend (Ascend, Cambricon, AMD, Intel XPU, ...).

Projects such as FlagGems, fla or sglang keep per-vendor copies of their kernels in folders or files named
after the device. Advice measured on NVIDIA GPUs (shared-memory layouts, TMA) does not apply to them.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from pathlib import PurePath

from tritonlint.engine import MatchContext
from tritonlint.registry import ParamSpec, condition

_TOKEN_SEPARATORS = re.compile(r"[_\-.]+")


def path_tokens(path: str) -> set[str]:
    """The words of every folder and file name of `path` (split at `_`, `-` and `.`), lower case."""
    return {token for part in PurePath(path).parts for token in _TOKEN_SEPARATORS.split(part.lower()) if token}


@condition("not-other-backend", params={"names": ParamSpec("list")})
def not_other_backend(ctx: MatchContext, names: list[str]) -> bool:
    """The file's path names no other accelerator's backend: no word of its folder and file names (split
    at `_`, `-`, `.`) matches one of `names` (shell patterns such as `gfx*`)."""
    tokens = path_tokens(ctx.file.path)
    return not any(fnmatchcase(token, pattern.lower()) for token in tokens for pattern in names)
