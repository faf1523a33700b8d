"""Editor latency: re-lint a ~1,000-line kernel file after a one-line edit, through the protocol.

Spawns `tritonlint server`, speaks JSON-RPC over its standard input/output, opens the file, then for each
edit sends `textDocument/didChange` and a `textDocument/diagnostic` request (pull diagnostics skip the
debounce, which is there for typing) and times the round trip until the findings come back, and the
server's CPU time (user + system, from /proc) over all the edits.

The default edit changes one line in place (`2048 //` <-> `4096 //` in a kernel's loop bound);
`--edit newline` inserts, then deletes, an empty line in the first kernel's body, which moves every line
below it; `--edit comment` inserts, then deletes, a comment line between two top-level statements (above a
launch function half-way down the file).

    python bench/lsp_latency.py [--edits 40] [--edit line|newline|comment] [--output bench/results/lsp_latency.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

KERNEL = '''

@triton.autotune(configs=[triton.Config({{"BLOCK_M": 64, "BLOCK_N": 64}}, num_warps=4),
                          triton.Config({{"BLOCK_M": 128, "BLOCK_N": 64}}, num_warps=8)], key=["M", "N", "K"])
@triton.jit
def matmul_{i}(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr = 32):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.static_range(0, 2048 // BLOCK_K):
        a = tl.load(a_ptrs, mask=offs_m[:, None] < M, other=0.0)
        b = tl.load(b_ptrs, mask=offs_n[None, :] < N, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.bfloat16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def launch_{i}(a, b, c):
    M, K = a.shape
    _, N = b.shape
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))
    matmul_{i}[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                    c.stride(1), BLOCK_M=64)
'''


def kernel_file(lines: int = 1000) -> str:
    parts = ["import torch\nimport triton\nimport triton.language as tl\n"]
    i = 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(KERNEL.format(i=i))
        i += 1
    return "".join(parts)


class Connection:
    def __init__(self, command: list[str], cwd: Path) -> None:
        self.process = subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0

    def send(self, method: str, params: Any, request: bool = False) -> int | None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        ident = None
        if request:
            self.next_id += 1
            ident = message["id"] = self.next_id
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()
        return ident

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("the server exited")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.process.stdout.read(length))

    def request(self, method: str, params: Any) -> Any:
        ident = self.send(method, params, request=True)
        while True:
            message = self.receive()
            if message.get("id") == ident and "method" not in message:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message.get("result")


def server_command() -> list[str]:
    script = shutil.which("tritonlint", path=os.path.dirname(sys.executable)) or shutil.which("tritonlint")
    return [script, "server"] if script else [sys.executable, "-m", "tritonlint", "server"]


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process so far (Linux), None where /proc is not there."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(edits: int, kind: str = "line") -> dict[str, Any]:
    text = kernel_file()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "tritonlint.toml").write_text('target = "sm_90"\n')
        path = root / "kernels.py"
        path.write_text(text)
        uri = path.as_uri()
        connection = Connection(server_command(), root)
        connection.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {
            "textDocument": {"diagnostic": {}}, "general": {"positionEncodings": ["utf-16"]}}})
        connection.send("initialized", {})
        connection.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                  "text": text}})
        first = connection.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        lines = text.split("\n")
        target = next(i for i, line in enumerate(lines) if "tl.static_range" in line)
        if kind == "comment":
            launches = [i for i, line in enumerate(lines) if line.startswith("def launch_")]
            target = launches[len(launches) // 2]
        times, counts = [], []
        cpu_before = _cpu_seconds(connection.process.pid)
        for edit in range(edits):
            if kind in ("newline", "comment"):
                if edit % 2 == 0:
                    lines.insert(target, "" if kind == "newline" else "# the launch: a grid over the tuned blocks")
                else:
                    del lines[target]
            else:
                lines[target] = lines[target].replace("2048 //" if edit % 2 == 0 else "4096 //",
                                                      "4096 //" if edit % 2 == 0 else "2048 //")
            changed = "\n".join(lines)
            start = time.perf_counter()
            connection.send("textDocument/didChange", {"textDocument": {"uri": uri, "version": edit + 2},
                                                       "contentChanges": [{"text": changed}]})
            report = connection.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            times.append((time.perf_counter() - start) * 1000)
            counts.append(len(report["items"]))
        cpu_after = _cpu_seconds(connection.process.pid)
        connection.request("shutdown", None)
        connection.send("exit", None)
        connection.process.wait(timeout=30)
    ordered = sorted(times)
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{_cpu()} ({os.cpu_count()} cores), {platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "file_lines": text.count("\n"),
        "findings": counts[-1],
        "first_lint_findings": len(first["items"]),
        "edit": kind,
        "edits": edits,
        "median_ms": round(statistics.median(times), 2),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 2),
        "min_ms": round(ordered[0], 2),
        "max_ms": round(ordered[-1], 2),
        "server_cpu_ms_per_edit": None if cpu_before is None or cpu_after is None
        else round((cpu_after - cpu_before) * 1000 / edits, 1),
        "load_average": list(os.getloadavg()),
        "target_ms": 50,
    }


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--edit", choices=("line", "newline", "comment"), default="line")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    result = measure(args.edits, args.edit)
    print(json.dumps(result, indent=2))
    if args.output:
        args.output.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
