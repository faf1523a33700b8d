"""`tritonlint server` end to end: the installed console script in a subprocess, driven over stdio by
pytest-lsp's client (and, in one test, by headless Neovim)."""
from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from tests.helpers import run_cli, tritonlint_executable

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types as lsp  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

TL001 = """\
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, out_ptr):
    acc = 0.0
    for k in tl.static_range(64):  # the loop \U0001f680 unrolled
        acc = tl.dot(tl.load(x_ptr + k), tl.load(x_ptr), acc)
    tl.store(out_ptr, acc)
"""
LOOP_LINE = 7

KERNELS = """\
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_SIZE": 1024}), triton.Config({"BLOCK_SIZE": 4096})], key=["n"])
@triton.jit
def scale_kernel(x_ptr, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
"""
LAUNCH = """\
import triton

from kernels import scale_kernel


def scale(x):
    n = x.numel()
    grid = lambda META: (triton.cdiv(n, META["BLOCK_SIZE"]),)
    note = "\u00e9\U0001f680"; scale_kernel[grid](x, n, BLOCK_SIZE=1024)
"""


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def offset(text: str, position: lsp.Position) -> int:
    lines = text.splitlines(keepends=True)
    start = sum(len(line) for line in lines[:position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    units = 0
    for column, char in enumerate(line):
        if units >= position.character:
            return start + column
        units += utf16(char)
    return start + len(line.rstrip("\n"))


def apply(text: str, edits: list[lsp.TextEdit]) -> str:
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(text, edit.range.start)] + edit.new_text + text[offset(text, edit.range.end):]
    return text


class Editor:
    """A pytest-lsp client with the buffers it has open."""

    def __init__(self, client: LanguageClient, folder: Path) -> None:
        self.client = client
        self.folder = folder
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}

    def uri(self, name: str) -> str:
        return (self.folder / name).as_uri()

    def open(self, name: str, text: str, write: bool = True) -> str:
        if write:
            (self.folder / name).write_text(text, encoding="utf-8")
        uri = self.uri(name)
        self.texts[uri], self.versions[uri] = text, 1
        self.client.diagnostics.pop(uri, None)
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "python", 1, text)))
        return uri

    def change(self, uri: str, text: str) -> None:
        self.texts[uri] = text
        self.versions[uri] += 1
        self.client.diagnostics.pop(uri, None)
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(self.versions[uri], uri),
            [lsp.TextDocumentContentChangeWholeDocument(text)]))

    async def diagnostics(self, uri: str, until: Callable[[list[lsp.Diagnostic]], bool] = lambda d: True,
                          timeout: float = 20) -> list[lsp.Diagnostic]:
        async def wait() -> list[lsp.Diagnostic]:
            while uri not in self.client.diagnostics or not until(list(self.client.diagnostics[uri])):
                await self.client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            return list(self.client.diagnostics[uri])
        return await asyncio.wait_for(wait(), timeout)

    async def actions(self, uri: str, line: int, only: list[str] | None = None) -> list[lsp.CodeAction]:
        found = await self.client.text_document_code_action_async(lsp.CodeActionParams(
            lsp.TextDocumentIdentifier(uri), lsp.Range(lsp.Position(line, 0), lsp.Position(line, 0)),
            lsp.CodeActionContext(diagnostics=[], only=only)))
        return [a for a in found or [] if isinstance(a, lsp.CodeAction)]

    def apply(self, uri: str, action: lsp.CodeAction) -> str:
        assert action.edit is not None and action.edit.changes is not None
        text = apply(self.texts[uri], list(action.edit.changes[uri]))
        self.change(uri, text)
        return text


@asynccontextmanager
async def editor(folder: Path, capabilities: lsp.ClientCapabilities | None = None,
                 options: object = None, env: dict[str, str] | None = None) -> AsyncIterator[Editor]:
    (folder / "tritonlint.toml").touch()  # no configuration of the folders above the test's
    config = ClientServerConfig(server_command=[*tritonlint_executable(), "server"],
                                server_env={**os.environ, **env} if env else None)
    client = await config.start()
    try:
        await client.initialize_session(lsp.InitializeParams(
            capabilities=capabilities or lsp.ClientCapabilities(), root_uri=folder.as_uri(),
            initialization_options=options))
        yield Editor(client, folder)
        await asyncio.wait_for(client.shutdown_session(), 20)
    finally:
        if client._server is not None and client._server.returncode is None:
            client._server.kill()  # a failed test: no shutdown handshake to wait for
        await client.stop()


def codes(diagnostics: list[lsp.Diagnostic]) -> list[str]:
    return [str(d.code) for d in diagnostics]


@pytest.mark.asyncio
async def test_push_diagnostics_on_open_change_and_close(tmp_path: Path) -> None:
    async with editor(tmp_path) as ed:
        uri = ed.open("k.py", TL001)
        found = await ed.diagnostics(uri)
        assert codes(found) == ["TL001"]
        first = found[0]
        assert first.range.start.line == LOOP_LINE and first.source == "tritonlint"
        assert first.severity == lsp.DiagnosticSeverity.Warning and "unrolls 64 iterations" in first.message
        ed.change(uri, TL001.replace("static_range(64)", "static_range(8)"))
        assert await ed.diagnostics(uri) == []
        ed.change(uri, TL001)
        assert codes(await ed.diagnostics(uri)) == ["TL001"]
        ed.client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
        assert await ed.diagnostics(uri, lambda d: not d) == []


@pytest.mark.asyncio
async def test_code_description_and_related_information(tmp_path: Path) -> None:
    rules = tmp_path / "lint_rules"
    rules.mkdir()
    rule = (Path(__file__).parent.parent / "rules" / "TL001-static-range-long-unroll.yaml").read_text()
    (rules / "ACME001.yaml").write_text(rule.replace("id: TL001", "id: ACME001\nurl: https://example.com/ACME001")
                                        .replace("name: static-range-long-unroll", "name: acme-unroll")
                                        .replace("# expect: TL001", "# expect: ACME001"))
    async with editor(tmp_path) as ed:
        (tmp_path / "tritonlint.toml").write_text('extend-rules = ["lint_rules"]\nselect = ["ACME001"]\n')
        uri = ed.open("k.py", TL001)
        found = await ed.diagnostics(uri)
        assert codes(found) == ["ACME001"]
        assert found[0].code_description is not None
        assert found[0].code_description.href == "https://example.com/ACME001"


@pytest.mark.asyncio
async def test_related_information(tmp_path: Path) -> None:
    from tritonlint.ruleset import load_rules

    rule = next(r for r in load_rules([]) if r.id == "TL006")
    code = next(e.code for e in rule.invalid if "NORM_KEY = " in e.code)  # the fix extends a module-level list
    async with editor(tmp_path) as ed:
        uri = ed.open("norm.py", code)
        (finding,) = [d for d in await ed.diagnostics(uri) if d.code == "TL006"]
        key_line = code.splitlines().index('NORM_KEY = ["N"]')
        assert finding.related_information is not None
        assert [(r.location.uri, r.location.range.start.line) for r in finding.related_information] == [(uri, key_line)]


@pytest.mark.asyncio
async def test_pull_diagnostics_with_result_ids(tmp_path: Path) -> None:
    capabilities = lsp.ClientCapabilities(text_document=lsp.TextDocumentClientCapabilities(
        diagnostic=lsp.DiagnosticClientCapabilities()))
    async with editor(tmp_path, capabilities) as ed:
        uri = ed.open("k.py", TL001)
        ident = lsp.TextDocumentIdentifier(uri)
        report = await ed.client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(ident))
        assert report.kind == "full" and codes(report.items) == ["TL001"] and report.result_id
        again = await ed.client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(ident, previous_result_id=report.result_id))
        assert again.kind == "unchanged" and again.result_id == report.result_id
        ed.change(uri, TL001.replace("static_range(64)", "static_range(4)"))
        after = await ed.client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(ident, previous_result_id=report.result_id))
        assert after.kind == "full" and not after.items and after.result_id != report.result_id
        assert uri not in ed.client.diagnostics  # a client that pulls is not pushed to as well


@pytest.mark.asyncio
async def test_quick_fix_is_applied_and_relinted(tmp_path: Path) -> None:
    async with editor(tmp_path) as ed:
        uri = ed.open("k.py", TL001)
        await ed.diagnostics(uri)
        actions = await ed.actions(uri, LOOP_LINE)
        titles = [a.title for a in actions]
        fix = next(a for a in actions if a.title.startswith("Fix TL001"))
        assert "(safe fix)" in fix.title and fix.is_preferred and fix.kind == lsp.CodeActionKind.QuickFix
        assert "Ignore TL001 on this line" in titles
        text = ed.apply(uri, fix)
        assert "tl.range(64, loop_unroll_factor=1)" in text
        assert await ed.diagnostics(uri) == []


@pytest.mark.asyncio
async def test_unsafe_fix_is_marked(tmp_path: Path) -> None:
    register_only = TL001.replace("acc = tl.dot(tl.load(x_ptr + k), tl.load(x_ptr), acc)", "acc = acc * 0.5 + k")
    async with editor(tmp_path) as ed:
        uri = ed.open("k.py", register_only)
        found = await ed.diagnostics(uri)
        assert found[0].severity == lsp.DiagnosticSeverity.Information
        fix = next(a for a in await ed.actions(uri, LOOP_LINE) if a.title.startswith("Fix TL001"))
        assert "(unsafe fix)" in fix.title and not fix.is_preferred


@pytest.mark.asyncio
async def test_ignore_action_appends_and_merges_noqa_in_utf16(tmp_path: Path) -> None:
    async with editor(tmp_path) as ed:
        uri = ed.open("k.py", TL001)
        await ed.diagnostics(uri)
        ignore = next(a for a in await ed.actions(uri, LOOP_LINE) if a.title == "Ignore TL001 on this line")
        edit = ignore.edit.changes[uri][0]  # type: ignore[index,union-attr]
        line = TL001.splitlines()[LOOP_LINE]
        assert edit.range.start.character == utf16(line)  # after the rocket, which is two UTF-16 units
        text = ed.apply(uri, ignore)
        assert text.splitlines()[LOOP_LINE] == line + "  # noqa: TL001"
        assert await ed.diagnostics(uri) == []
        merged = TL001.replace("  # the loop", "  # noqa: TL004 the loop")
        ed.change(uri, merged)
        await ed.diagnostics(uri, lambda d: bool(d))
        ignore = next(a for a in await ed.actions(uri, LOOP_LINE) if a.title == "Ignore TL001 on this line")
        text = ed.apply(uri, ignore)
        assert "# noqa: TL001, TL004 the loop" in text.splitlines()[LOOP_LINE]
        assert codes(await ed.diagnostics(uri)) == ["TL900"]  # TL004 suppresses nothing on that line


@pytest.mark.asyncio
async def test_fix_all_applies_safe_fixes_only(tmp_path: Path) -> None:
    register_only = TL001.replace("def kernel(", "def other(").replace(
        "acc = tl.dot(tl.load(x_ptr + k), tl.load(x_ptr), acc)", "acc = acc * k")
    async with editor(tmp_path) as ed:
        uri = ed.open("k.py", TL001 + "\n\n" + register_only)
        assert codes(await ed.diagnostics(uri)) == ["TL001", "TL001"]
        actions = await ed.actions(uri, 0, only=[lsp.CodeActionKind.SourceFixAll])
        assert [a.kind for a in actions] == ["source.fixAll.tritonlint"]
        text = ed.apply(uri, actions[0])
        assert text.count("loop_unroll_factor=1") == 1  # the register-only loop's fix is unsafe
        remaining = await ed.diagnostics(uri)
        assert [d.severity for d in remaining] == [lsp.DiagnosticSeverity.Information]


@pytest.mark.asyncio
async def test_hover_shows_summary_and_evidence(tmp_path: Path) -> None:
    async with editor(tmp_path) as ed:
        uri = ed.open("k.py", TL001)
        await ed.diagnostics(uri)
        line = TL001.splitlines()[LOOP_LINE]
        found = await ed.client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uri), lsp.Position(LOOP_LINE, line.index("static_range"))))
        assert found is not None
        text = found.contents.value  # type: ignore[union-attr]
        assert "TL001" in text and "Flags a `for` loop over `tl.static_range" in text and "Evidence" in text
        assert "TL001-static-range-k-loop" in text
        nothing = await ed.client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uri), lsp.Position(0, 0)))
        assert nothing is None


@pytest.mark.asyncio
async def test_configuration_reload_and_bad_configuration(tmp_path: Path) -> None:
    capabilities = lsp.ClientCapabilities(workspace=lsp.WorkspaceClientCapabilities(
        did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)))
    async with editor(tmp_path, capabilities) as ed:
        uri = ed.open("k.py", TL001)
        assert codes(await ed.diagnostics(uri)) == ["TL001"]
        config = tmp_path / "tritonlint.toml"

        def changed() -> None:
            ed.client.diagnostics.pop(uri, None)
            ed.client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
                [lsp.FileEvent(config.as_uri(), lsp.FileChangeType.Changed)]))

        config.write_text('ignore = ["TL001"]\n')
        changed()
        assert await ed.diagnostics(uri) == []
        config.write_text("static-range-max-trip = 100\n")
        changed()
        assert await ed.diagnostics(uri) == []
        config.write_text("select = 3\n")  # bad: an error for the user, and the defaults meanwhile
        changed()
        assert codes(await ed.diagnostics(uri)) == ["TL001"]
        assert any("tritonlint.toml: `select`" in m.message and m.type == lsp.MessageType.Error
                   for m in ed.client.messages)
        config.write_text('ignore = ["TL001"]\n')  # saved from the editor
        ed.client.diagnostics.pop(uri, None)
        ed.client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(config.as_uri())))
        assert await ed.diagnostics(uri) == []


@pytest.mark.asyncio
async def test_a_changed_triton_pin_is_seen(tmp_path: Path) -> None:
    capabilities = lsp.ClientCapabilities(workspace=lsp.WorkspaceClientCapabilities(
        did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)))
    block_pointer = ("import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(a_ptr, M, K):\n"
                     "    p = tl.make_block_ptr(a_ptr, (M, K), (K, 1), (0, 0), (64, 64), (1, 0))\n")
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("triton==3.6.0\n")
    async with editor(tmp_path, capabilities) as ed:
        uri = ed.open("k.py", block_pointer)
        assert "TL103" not in codes(await ed.diagnostics(uri))  # block pointers work in 3.6
        requirements.write_text("triton==3.9.0\n")
        ed.client.diagnostics.pop(uri, None)
        ed.client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
            [lsp.FileEvent(requirements.as_uri(), lsp.FileChangeType.Changed)]))
        assert "TL103" in codes(await ed.diagnostics(uri, until=lambda d: "TL103" in codes(d)))


@pytest.mark.asyncio
async def test_client_settings(tmp_path: Path) -> None:
    async with editor(tmp_path, options={"ignore": ["TL001"]}) as ed:
        uri = ed.open("k.py", TL001)
        assert await ed.diagnostics(uri) == []
        ed.client.diagnostics.pop(uri, None)
        ed.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
            {"tritonlint": {"select": ["TL001"], "fail-level": "error"}}))
        found = await ed.diagnostics(uri)
        assert codes(found) == ["TL001"] and found[0].severity == lsp.DiagnosticSeverity.Hint
        ed.client.diagnostics.pop(uri, None)
        ed.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
            {"tritonlint": {"select": ["TL999"]}}))
        assert codes(await ed.diagnostics(uri)) == ["TL001"]  # a selector naming no rule is reported, not used
        assert any("TL999" in m.message for m in ed.client.messages)


@pytest.mark.asyncio
async def test_editing_a_kernel_module_updates_the_modules_that_launch_it(tmp_path: Path) -> None:
    async with editor(tmp_path) as ed:
        (tmp_path / "kernels.py").write_text(KERNELS)
        launch = ed.open("launch.py", LAUNCH)
        found = await ed.diagnostics(launch)  # the kernel's module is read from disk
        assert codes(found) == ["TL004"]
        row = LAUNCH.splitlines()[8]
        start = row.index("BLOCK_SIZE=1024") if found[0].range.start.character > utf16(row[:row.index("scale_kernel")]) \
            else row.index("scale_kernel")
        assert found[0].range.start.line == 8 and found[0].range.start.character == utf16(row[:start])
        kernels = ed.open("kernels.py", KERNELS, write=False)
        await ed.diagnostics(kernels)
        # Unsaved: the kernel is no longer autotuned, so the launch's keyword no longer conflicts.
        untuned = "\n".join(line for line in KERNELS.splitlines() if not line.startswith("@triton.autotune"))
        ed.change(kernels, untuned)
        await ed.diagnostics(launch, lambda d: not d)
        ed.client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(kernels)))
        await ed.diagnostics(launch, lambda d: codes(d) == ["TL004"])  # back to the file on disk


@pytest.mark.asyncio
async def test_an_open_buffer_of_the_same_module_name_in_another_folder_is_not_the_launched_kernel(tmp_path: Path) -> None:
    untuned = "\n".join(line for line in KERNELS.splitlines() if not line.startswith("@triton.autotune"))
    for folder, kernels in (("a", KERNELS), ("b", untuned)):  # both are the module `kernels` to their scripts
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "kernels.py").write_text(kernels)
    async with editor(tmp_path) as ed:
        other = ed.open("b/kernels.py", untuned, write=False)
        await ed.diagnostics(other)
        launch = ed.open("a/launch.py", LAUNCH)
        assert codes(await ed.diagnostics(launch)) == ["TL004"]  # a/kernels.py, from disk, not b's buffer
        beside = ed.open("b/launch.py", LAUNCH)
        assert await ed.diagnostics(beside) == []


@pytest.mark.asyncio
async def test_a_kernel_module_of_a_namespace_folder_resolves_by_its_dotted_name(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "mpa").mkdir()
    (tmp_path / "mpa" / "kernels.py").write_text(KERNELS)  # no __init__.py: imported as mpa.kernels (PEP 420)
    async with editor(tmp_path) as ed:
        launch = ed.open("mpa/launch.py", LAUNCH.replace("from kernels import", "from mpa.kernels import"))
        assert codes(await ed.diagnostics(launch)) == ["TL004"]


@pytest.mark.asyncio
async def test_bad_input_never_crashes_the_server(tmp_path: Path) -> None:
    async with editor(tmp_path) as ed:
        uri = ed.open("k.py", TL001)
        await ed.diagnostics(uri)
        ed.change(uri, TL001.replace("tl.store(out_ptr, acc)", "tl.store(out_ptr,"))
        found = await ed.diagnostics(uri)
        assert codes(found) == ["TL000"] and found[0].severity == lsp.DiagnosticSeverity.Error
        assert await ed.actions(uri, 0) == []
        with pytest.raises(Exception):
            await ed.client.protocol.send_request_async("tritonlint/noSuchMethod", {})
        huge = ed.open("huge.py", "import triton\n" + "x = 1\n" * 900_000)
        found = await ed.diagnostics(huge)
        assert len(found) == 1 and "not linted" in found[0].message
        nested = ed.open("nested.py", "import triton\nx = " + "(" * 5000 + ")" * 5000 + "\n")
        await ed.diagnostics(nested)
        ed.change(uri, TL001)  # still serving
        assert codes(await ed.diagnostics(uri)) == ["TL001"]


def test_server_without_the_extra_says_how_to_install_it() -> None:
    code = ("import sys; sys.modules['pygls'] = None; sys.argv = ['tritonlint', 'server']; "
            "from tritonlint.cli import main; main()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert 'pip install "tritonlint[server]"' in done.stderr and "Traceback" not in done.stderr
    assert run_cli("server", "--help").returncode == 0


NVIM_SCRIPT = r"""
local cmd = vim.fn.json_decode(os.getenv("TRITONLINT_SERVER"))
local client_id = vim.lsp.start_client({cmd = cmd, name = "tritonlint", root_dir = vim.fn.getcwd()})
vim.cmd("edit k.py")
local buf = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(buf, client_id)
local function fail(message) io.stderr:write(message .. "\n"); vim.cmd("cquit 1") end
local ok = vim.wait(20000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
if not ok then fail("no diagnostics") end
local d = vim.diagnostic.get(buf)[1]
if d.code ~= "TL001" or d.lnum ~= %(line)d then fail("unexpected " .. vim.inspect(d)) end
local client = vim.lsp.get_client_by_id(client_id)
local params = vim.lsp.util.make_range_params()
params.range = {start = {line = d.lnum, character = 0}, ["end"] = {line = d.lnum, character = 0}}
params.context = {diagnostics = vim.lsp.diagnostic.get_line_diagnostics(buf, d.lnum)}
local response = client.request_sync("textDocument/codeAction", params, 10000, buf)
if not response or response.err then fail("no code actions " .. vim.inspect(response)) end
for _, action in ipairs(response.result) do
  if action.isPreferred then vim.lsp.util.apply_workspace_edit(action.edit, "utf-16") end
end
local line = vim.api.nvim_buf_get_lines(buf, d.lnum, d.lnum + 1, false)[1]
if not line:find("tl.range(64, loop_unroll_factor=1)", 1, true) then fail("not fixed: " .. line) end
ok = vim.wait(20000, function() return #vim.diagnostic.get(buf) == 0 end, 50)
if not ok then fail("TL001 still shown after the fix") end
vim.cmd("qall!")
"""


def test_neovim_shows_tl001_and_applies_the_quick_fix(tmp_path: Path) -> None:
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("nvim is not installed")
    import json

    (tmp_path / "tritonlint.toml").touch()
    (tmp_path / "k.py").write_text(TL001, encoding="utf-8")
    (tmp_path / "test.lua").write_text(NVIM_SCRIPT % {"line": LOOP_LINE})
    done = subprocess.run([nvim, "--headless", "--clean", "-c", "luafile test.lua"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ,
                               "TRITONLINT_SERVER": json.dumps([*tritonlint_executable(), "server"])})
    assert done.returncode == 0, done.stderr + done.stdout


# The README's eglot configuration, with the server command of this environment; flymake's timers and
# eglot's change timer do not run in batch mode, so the script starts them itself.
EMACS_SCRIPT = r"""
(unless (require 'eglot nil t) (kill-emacs 77))
(require 'flymake)
(require 'seq)
(defun fail (message &rest args)
  (princ (concat (apply #'format message args) "\n") #'external-debugging-output)
  (kill-emacs 1))
(defun wait-for (done)
  (let ((deadline (+ (float-time) 20)))
    (while (and (not (funcall done)) (< (float-time) deadline))
      (accept-process-output nil 0.05)
      (when (eglot-current-server) (flymake-start)))
    (funcall done)))
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               `(python-mode . ,(json-parse-string (getenv "TRITONLINT_SERVER") :array-type 'list))))
(find-file "k.py")
(python-mode)
(eglot-ensure)
(run-hooks 'post-command-hook)  ; eglot-ensure connects after the next command
(unless (wait-for #'eglot-current-server) (fail "eglot did not connect"))
(unless (wait-for #'flymake-diagnostics) (fail "no diagnostics"))
(let* ((d (car (flymake-diagnostics)))
       (line (line-number-at-pos (flymake-diagnostic-beg d))))
  (unless (and (string-match-p "TL001" (flymake-diagnostic-text d)) (= line %(line)d))
    (fail "unexpected: %%S at line %%d" (flymake-diagnostic-text d) line)))
(goto-char (point-min))
(forward-line (1- %(line)d))
(let* ((actions (eglot-code-actions (line-beginning-position) (line-end-position) "quickfix"))
       (preferred (seq-find (lambda (a) (eq (plist-get a :isPreferred) t)) actions)))
  (unless preferred (fail "no preferred quick fix in %%S" actions))
  (condition-case nil
      (eglot--apply-workspace-edit (plist-get preferred :edit))
    (wrong-number-of-arguments (eglot--apply-workspace-edit (plist-get preferred :edit) 'test))))
(let ((line (buffer-substring (line-beginning-position) (line-end-position))))
  (unless (string-search "tl.range(64, loop_unroll_factor=1)" line) (fail "not fixed: %%s" line)))
(eglot--signal-textDocument/didChange)
(unless (wait-for (lambda () (null (flymake-diagnostics)))) (fail "TL001 still shown after the fix"))
(kill-emacs 0)
"""


def test_emacs_eglot_shows_tl001_and_applies_the_quick_fix(tmp_path: Path) -> None:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("emacs is not installed")
    import json

    (tmp_path / "tritonlint.toml").touch()
    (tmp_path / "k.py").write_text(TL001, encoding="utf-8")
    (tmp_path / "test.el").write_text(EMACS_SCRIPT % {"line": LOOP_LINE + 1}, encoding="utf-8")
    done = subprocess.run([emacs, "--batch", "-l", "test.el"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "HOME": str(tmp_path),
                                            "TRITONLINT_SERVER": json.dumps([*tritonlint_executable(), "server"])})
    if done.returncode == 77:
        pytest.skip("this Emacs has no eglot (Emacs 29 has it built in; Debian's elpa-eglot adds it to 28)")
    assert done.returncode == 0, done.stderr + done.stdout


@pytest.mark.asyncio
async def test_a_late_lint_is_dropped_and_the_previous_diagnostics_stay(tmp_path: Path) -> None:
    capabilities = lsp.ClientCapabilities(workspace=lsp.WorkspaceClientCapabilities(
        did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)))
    config = tmp_path / "tritonlint.toml"
    config.write_text("file-timeout = 0\n")
    # test-only hook: TL001 takes 1 s, within no limit, then past a limit of 0.3 s
    async with editor(tmp_path, capabilities, env={"TRITONLINT_TEST_SLOW_STAGE": "rule:TL001:1"}) as ed:
        uri = ed.open("k.py", TL001)
        assert codes(await ed.diagnostics(uri)) == ["TL001"]
        config.write_text("file-timeout = 0.3\n")
        ed.client.diagnostics.pop(uri, None)
        ed.client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
            [lsp.FileEvent(config.as_uri(), lsp.FileChangeType.Changed)]))
        ed.change(uri, TL001 + "\n# edited\n")
        assert codes(await ed.diagnostics(uri)) == ["TL001"]
        for _ in range(50):
            if any("time limit" in m.message for m in ed.client.messages):
                break
            await asyncio.sleep(0.1)
        assert any("time limit" in m.message and m.type == lsp.MessageType.Error for m in ed.client.messages)
