"""What TL102 makes of the kernel's launches (analysis/offset_launches.py): reported where a launch shows the
program id ranging over the rows of a large tensor (with a note saying so); otherwise reported only with the
option `int32-offset-unbacked`, and silent even then where every launch keeps the products small."""
from __future__ import annotations

import ast
import textwrap

import pytest

from tests.helpers import cli_findings, documented_exemptions, exemption_docs, lint_code
from tritonlint.analysis.launch_index import build_index, module_links
from tritonlint.analysis.model import ModuleModel
from tritonlint.analysis.provenance import Origin, feature_width, rotary_table, router_scores

KERNEL = '''import triton
import triton.language as tl


@triton.jit
def copy_rows(x_ptr, y_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_row + cols, mask=cols < n_cols)
    tl.store(y_ptr + row * stride_row + cols, x, mask=cols < n_cols)
'''


UNBACKED = {"int32-offset-unbacked": True}


def _severities(rules, launch: str, options: dict | None = None, kernel: str = KERNEL) -> list[str]:
    """"large" for a finding whose notes say a launch shows the large count, "spans" for one reported (with
    `int32-offset-unbacked`) because a launch spans a bare leading dimension, else its severity."""
    result = lint_code(kernel + launch, rules, select=["TL102"], options=options)
    return ["large" if any("The launch shows" in n for n in d.notes) else
            "spans" if any("The launch spans" in n for n in d.notes) else d.severity for d in result.diagnostics]


def test_no_launch_is_silent_unless_unbacked_findings_are_asked_for(rules):
    assert _severities(rules, "") == []
    assert _severities(rules, "", UNBACKED) == ["info"]


def test_launch_over_rows_is_noted(rules):
    launch = "\n\ndef run(x, y):\n    rows = x.view(-1, x.shape[-1])\n    copy_rows[(rows.shape[0],)](rows, y, rows.shape[1], rows.stride(0), BLOCK=128)\n"
    assert _severities(rules, launch) == ["large"]


def test_launch_over_tokens_by_name_is_noted(rules):
    launch = "\n\ndef run(x, y, num_tokens):\n    copy_rows[(num_tokens,)](x, y, x.shape[1], x.stride(0), BLOCK=128)\n"
    assert _severities(rules, launch) == ["large"]


def test_unknown_grid_is_unbacked(rules):
    launch = "\n\ndef run(x, y, grid):\n    copy_rows[grid](x, y, x.shape[1], x.stride(0), BLOCK=128)\n"
    assert _severities(rules, launch) == []
    assert _severities(rules, launch, UNBACKED) == ["info"]


def test_small_multiplier_at_every_launch_is_silent(rules):
    launch = ("\n\ndef run(x, y, n):\n    copy_rows[(n,)](x, y, 8, x.stride(-1), BLOCK=8)\n"
              "    copy_rows[(n,)](x, y, 8, 4, BLOCK=8)\n")
    assert _severities(rules, launch) == []
    assert _severities(rules, launch, UNBACKED) == []


def test_one_launch_with_a_large_multiplier_keeps_it(rules):
    launch = ("\n\ndef run(x, y, n):\n    copy_rows[(n,)](x, y, 8, x.stride(-1), BLOCK=8)\n"
              "    copy_rows[(n,)](x, y, 8, x.stride(0), BLOCK=8)\n")
    assert _severities(rules, launch, UNBACKED) == ["info"]


def test_grid_over_a_dimension_times_its_stride_spans_the_tensor_only_with_the_option(rules):
    """`M, N = x.shape; k[(M,)](..., x.stride(0))`: the offsets step over every element of x, but a bare
    leading dimension is as often a weight's or a decode batch's rows (round R6: 6 of 26 right)."""
    launch = "\n\ndef run(x, y):\n    M, N = x.shape\n    copy_rows[(M,)](x, y, N, x.stride(0), BLOCK=128)\n"
    assert _severities(rules, launch) == []
    assert _severities(rules, launch, UNBACKED) == ["spans"]
    (finding,) = lint_code(KERNEL + launch, rules, select=["TL102"], options=UNBACKED).diagnostics
    assert finding.severity == "info" and any("the offsets span the whole tensor" in n for n in finding.notes)
    # rows of a tensor flattened to rows are named as rows: reported by default (test_launch_over_rows_is_noted)


def test_spanning_needs_the_stride_of_the_same_dimension_and_tensor(rules):
    """The grid over x's rows with y's row stride, or x's column stride, or an index tensor's rows: unbacked."""
    for launch in ("\n\ndef run(x, y):\n    M, N = x.shape\n    copy_rows[(M,)](x, y, N, y.stride(0), BLOCK=128)\n",
                   "\n\ndef run(x, y):\n    copy_rows[(x.shape[0],)](x, y, 8, x.stride(1), BLOCK=128)\n",
                   "\n\ndef run(x, idx):\n    copy_rows[(idx.shape[0],)](idx, x, 8, idx.stride(0), BLOCK=128)\n"):
        assert _severities(rules, launch) == [], launch


def test_decode_kernel_is_not_backed_by_a_token_count(rules):
    """In a decode step the tokens are the batch: a token-count grid does not back the finding."""
    kernel = KERNEL.replace("copy_rows", "decode_rows")
    launch = "\n\ndef run(x, y, num_tokens):\n    decode_rows[(num_tokens,)](x, y, x.shape[1], x.stride(0), BLOCK=128)\n"
    assert _severities(rules, launch, kernel=kernel) == []
    assert _severities(rules, launch, UNBACKED, kernel=kernel) == ["info"]


PROMOTED_COUNT = '''import triton
import triton.language as tl


@triton.jit
def chunk(q_ptr, o_ptr, T, H, K: tl.constexpr, BT: tl.constexpr):
    i_t, i_h, i_b = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    bos = (i_b * T).to(tl.int64)
    base = (bos * H + i_h) * K
    tl.store(o_ptr + base + tl.arange(0, K), tl.load(q_ptr + base + tl.arange(0, K)))
    row = (i_b * T + i_t).to(tl.int64) * H
    tl.store(o_ptr + row + tl.arange(0, K), tl.load(q_ptr + row + tl.arange(0, K)))
'''


def test_count_promoted_before_scaling_is_exempt(rules):
    """`bos = (i_b * T).to(tl.int64)` then `(bos * H + i_h) * K`: the int32 product counts tokens."""
    assert _severities(rules, "", UNBACKED, kernel=PROMOTED_COUNT) == []
    # promoted but then only added to the pointer: the int32 product is the element offset
    late = PROMOTED_COUNT.replace("base = (bos * H + i_h) * K", "base = bos + i_h")
    assert _severities(rules, "", UNBACKED, kernel=late) == ["info"]


def test_tl102_doc_lists_exactly_its_exemptions(rules):
    from tritonlint.rules.tl102_int32_offset_overflow import EXEMPTIONS

    assert documented_exemptions(rules, "TL102") == exemption_docs(EXEMPTIONS)


def test_rows_of_routing_data_or_small_items_do_not_back_a_finding(rules):
    """Router logits and top-k buffers are an expert count wide; a grid over the leading dimension of a
    tensor of heads, slots or per-request entries counts few rows."""
    for launch in ("\n\ndef run(gating_output, y):\n    num_tokens = gating_output.shape[0]\n"
                   "    copy_rows[(num_tokens,)](gating_output, y, 8, gating_output.stride(0), BLOCK=128)\n",
                   "\n\ndef run(logics, y):\n    head_num = logics.shape[0]\n"
                   "    copy_rows[(head_num,)](logics, y, 8, logics.stride(0), BLOCK=128)\n",
                   "\n\ndef run(slot_k, y):\n    copy_rows[(slot_k.shape[0],)](slot_k, y, 8, slot_k.stride(0), BLOCK=128)\n"):
        assert _severities(rules, launch) == [], launch
    assert _severities(rules, "\n\ndef run(x, y):\n    copy_rows[(x.shape[0],)](x, y, 8, x.stride(0), BLOCK=128)\n",
                       UNBACKED) == ["spans"]


SLOT_WRITE = '''import triton
import triton.language as tl


@triton.jit
def store_kv(key_ptr, cache_ptr, slot_ptr, stride_key, stride_cache, D: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    slot = tl.load(slot_ptr + token)
    tl.store(cache_ptr + slot * stride_cache + tl.arange(0, D), tl.load(key_ptr + token * stride_key + tl.arange(0, D)))
'''


def test_slot_times_the_leading_stride_of_a_kv_cache_is_backed(rules):
    """A KV cache fills the GPU memory left after the weights: a slot index times its leading stride. Not a
    rotary table, an index tensor or a recurrent state cache (one small entry per running request)."""
    launch = "\n\ndef run(key, key_cache, slot_mapping):\n    store_kv[(key.shape[0],)](key, key_cache, slot_mapping, key.stride(0), key_cache.stride(0), D=128)\n"
    assert _severities(rules, launch, kernel=SLOT_WRITE) == ["large"]
    for other in ("cos_sin_cache", "cache_indices", "value", "conv_cache"):  # rotary table, index tensor, no cache, state cache
        assert _severities(rules, launch.replace("key_cache", other), kernel=SLOT_WRITE) == [], other
    # an inner stride of the cache (a head) spans one block
    assert _severities(rules, launch.replace("key_cache.stride(0)", "key_cache.stride(1)"), kernel=SLOT_WRITE) == []


@pytest.mark.parametrize("host, kernel", [("apply_penalty", "copy_rows"), ("run", "_dflash_accept_kernel"),
                                          ("selective_state_update", "copy_rows"),
                                          ("run", "_single_query_cached_kv_attention")])
def test_per_request_steps_are_not_backed_by_their_rows(rules, host, kernel):
    """Sampling penalties, accepting drafts and decode-time state updates run one program per request: the
    spanned rows (logits, candidates, states) are the batch of requests, not its tokens (named by the kernel,
    its file or the host function that launches it)."""
    launch = f"\n\ndef {host}(x, y):\n    {kernel}[(x.shape[0],)](x, y, 8, x.stride(0), BLOCK=128)\n"
    assert _severities(rules, launch, kernel=KERNEL.replace("copy_rows", kernel)) == []
    assert _severities(rules, launch, UNBACKED, kernel=KERNEL.replace("copy_rows", kernel)) == ["info"]


def test_rejection_sampling_is_no_per_request_step(rules):
    """Rejection sampling reads a vocabulary-wide probability row per drafted token: backed as any kernel."""
    kernel = KERNEL.replace("copy_rows", "speculative_sampling_kernel")
    launch = "\n\ndef chain_speculative_sampling(x, y):\n    speculative_sampling_kernel[(x.shape[0],)](x, y, 8, x.stride(0), BLOCK=128)\n"
    assert _severities(rules, launch, UNBACKED, kernel=kernel) == ["spans"]


WRAPPER = textwrap.dedent("""
    import triton
    from pkg.kernels import copy_rows

    def copy(x, y):
        rows = x.view(-1, x.shape[-1])
        M, N = rows.shape
        copy_rows[(M,)](rows, y, N, rows.stride(0), BLOCK=triton.next_power_of_2(N))
""")


def _package(tmp_path, wrapper: str = WRAPPER):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "kernels.py").write_text(KERNEL)
    (tmp_path / "pkg" / "ops.py").write_text(wrapper)
    return tmp_path


def _tl102(repo, *args: str) -> list[dict]:
    return cli_findings(repo, "TL102", *args)


@pytest.mark.parametrize("cache", [("--no-cache",), ()])
def test_a_kernel_launched_only_from_a_wrapper_module_is_judged_from_that_launch(tmp_path, cache):
    repo = _package(tmp_path)
    for _ in range(2):  # the second run is served from the cache when there is one
        (finding,) = _tl102(repo, ".", *cache)
        assert finding["filename"] == "pkg/kernels.py" and finding["location"]["row"] == 7
        assert "the launch at line 8 of `pkg.ops`" in finding["notes"][0]
    # a wrapper whose launch shows no large count (a grid of one program) backs nothing
    (repo / "pkg" / "ops.py").write_text(WRAPPER.replace("[(M,)]", "[(1,)]"))
    assert _tl102(repo, ".", *cache) == []


def test_a_kernel_launched_in_its_own_module_is_judged_from_its_own_launches_only(tmp_path):
    """The launch index lists a module's kernels that it never launches (and autotuned ones); a kernel
    launched at home is judged from those launches, as before."""
    modules = frozenset({"pkg.kernels", "pkg.ops"})
    home = KERNEL + "\n\ndef run(x, y):\n    copy_rows[(1,)](x, y, 8, x.stride(0), BLOCK=128)\n"
    kernels = module_links(ModuleModel(ast.parse(home), "pkg.kernels", "pkg/kernels.py", text=home),
                           modules)
    assert kernels is not None and kernels.unlaunched == () and kernels.indexed == ()
    alone = module_links(ModuleModel(ast.parse(KERNEL), "pkg.kernels", "pkg/kernels.py", text=KERNEL),
                         modules)
    ops = module_links(ModuleModel(ast.parse(WRAPPER), "pkg.ops", "pkg/ops.py", text=WRAPPER), modules)
    assert alone is not None and alone.unlaunched == ("pkg.kernels.copy_rows",)
    assert build_index({"pkg.kernels": alone, "pkg.ops": ops}, modules) == {  # type: ignore[dict-item]
        "pkg.kernels.copy_rows": {"pkg.ops": frozenset({"pkg.kernels.copy_rows"})}}


def test_scores_are_routing_data_only_in_a_routing_kernel(rules):
    """`scores` of a grouped top-k or router kernel are one row of expert scores per token; the `scores` of a
    sparse-attention indexer's top-k span the whole context and back the finding."""
    launch = "\n\ndef {host}(scores, y):\n    {kernel}[(scores.shape[0],)](scores, y, 8, scores.stride(0), BLOCK=128)\n"
    for host, kernel in (("grouped_topk", "copy_rows"), ("run", "moe_fused_gate_kernel")):
        code = KERNEL.replace("copy_rows", kernel)
        assert _severities(rules, launch.format(host=host, kernel=kernel), kernel=code) == [], host
    product = "\n\ndef grouped_topk(scores, y, n_group):\n    num_tokens = scores.shape[0]\n" \
              "    copy_rows[(num_tokens * n_group,)](scores, y, 8, scores.stride(0), BLOCK=128)\n"
    assert _severities(rules, product) == []  # the factor that makes the grid large counts the scores' rows
    code = KERNEL.replace("copy_rows", "indexer_topk_kernel")
    assert _severities(rules, launch.format(host="run", kernel="indexer_topk_kernel"), UNBACKED, kernel=code) == ["spans"]


AXIS1_ROWS = '''import triton
import triton.language as tl


@triton.jit
def scale_rows(x_ptr, seq_len, width, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    s = tl.program_id(1)
    cols = tl.arange(0, BLOCK)
    row = x_ptr + OFFSET + cols
    tl.store(row, tl.load(row, mask=cols < width) * 2, mask=cols < width)
'''


@pytest.mark.parametrize("offset, width, reported", [
    ("s * width", "x.shape[-1]", False),  # one token's features: below 65,535 x 32,768
    ("s * width", "hidden", False),
    ("s * width", "vocab", True),  # a vocabulary-wide row passes 2^31
    ("s * width", "n_tokens", True),
    ("(b * seq_len + s) * width", "hidden", True),  # the flattened token index spans the tensor
])
def test_a_program_id_of_axis_1_times_one_tokens_width_stays_small(rules, offset, width, reported):
    launch = ("\n\ndef run(x):\n    batch, seq_len, hidden = x.shape\n    vocab = n_tokens = hidden\n"
              f"    scale_rows[(batch, seq_len)](x, seq_len, {width}, BLOCK=1024)\n")
    result = lint_code(AXIS1_ROWS.replace("OFFSET", offset) + launch, rules, select=["TL102"])
    assert bool(result.diagnostics) is reported


def test_rotary_tables_and_feature_widths_by_name():
    assert all(rotary_table(t) for t in ("cos", "self.sin_cached", "cos_sin_cache", "freqs_cis"))
    assert all(rotary_table(t) for t in ("freqs_cos", "cos_seq", "rope_sin_cache", "self.pos_cos"))
    assert not any(rotary_table(t) for t in ("q_rope", "cosine_scores", "x", "cos_sim", "q_cos"))
    assert feature_width(Origin("param", "head_dim", names=("head_dim",)))
    assert feature_width(Origin("shape", "x.shape[-1]", tensor="x", index=-1, last=True))
    assert not feature_width(Origin("shape", "logits.shape[-1]", tensor="logits", index=-1, last=True))
    assert not feature_width(Origin("shape", "x.shape[1]", tensor="x", index=1, names=("seq_len",), middle=True))
    assert not feature_width(Origin("param", "intermediate_size", names=("intermediate_size",)))


NORM_ROWS = '''import triton
import triton.language as tl


@triton.jit
def norm_rows(x_ptr, w_ptr, y_ptr, n_features, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_features
    x = tl.load(x_ptr + row * n_features + cols, mask=mask, other=0.0)
    w = WEIGHT
    tl.store(y_ptr + row * n_features + cols, x * w, mask=mask)


def run(x, w, y):
    n_features = x.shape[-1]
    x2 = x.reshape(-1, n_features)
    norm_rows[(x2.shape[0],)](x2, w, y, n_features, BLOCK=BLOCK_VALUE)
'''


@pytest.mark.parametrize("weight, block, reported", [
    ("tl.load(w_ptr + cols, mask=mask)", "2048", False),  # one token's features, at most 2,048 of them
    ("tl.load(w_ptr + cols, mask=mask)", "4096", True),  # 1M tokens of 4,096 features pass 2^31
    ("tl.load(w_ptr + cols, mask=mask)", "triton.next_power_of_2(n_features)", True),  # the block follows the row
    ("1.0", "1024", True),  # no per-feature vector: the rows may be attention scores
    ("tl.load(w_ptr + row * n_features + cols, mask=mask)", "1024", True),  # a per-row tensor, not a vector
    ("tl.load(w_ptr + tl.arange(0, 64))", "1024", True),  # a vector over other lanes than the row's
])
def test_a_single_block_over_one_tokens_features_bounds_the_row(rules, weight, block, reported):
    code = NORM_ROWS.replace("WEIGHT", weight).replace("BLOCK_VALUE", block)
    assert bool(lint_code(code, rules, select=["TL102"]).diagnostics) is reported


@pytest.mark.parametrize("stride, reported", [
    ("n_features", False),  # the launch passes the width's very value as the row stride
    ("x2.stride(0)", True),  # a tensor's row stride: a view's rows can be wider than the block
    ("2 * n_features", True),  # another value
])
def test_a_row_stride_passed_the_width_bounds_the_row(rules, stride, reported):
    code = NORM_ROWS.replace("def norm_rows(x_ptr, w_ptr, y_ptr, n_features,",
                             "def norm_rows(x_ptr, w_ptr, y_ptr, stride_row, n_features,").replace(
        "row * n_features", "row * stride_row").replace("w = WEIGHT", "w = tl.load(w_ptr + cols, mask=mask)").replace(
        "(x2, w, y, n_features,", f"(x2, w, y, stride_row={stride}, n_features=n_features,").replace("BLOCK_VALUE", "2048")
    assert bool(lint_code(code, rules, select=["TL102"]).diagnostics) is reported


def test_a_column_block_of_the_grid_takes_any_width(rules):
    split = NORM_ROWS.replace("mask = cols < n_features", "mask = cols < n_features\n"
                              "    tail = tl.program_id(1) * BLOCK + cols < n_features").replace(
        "w = WEIGHT", "w = tl.load(w_ptr + cols, mask=mask)").replace("BLOCK_VALUE", "1024")
    assert lint_code(split, rules, select=["TL102"]).diagnostics


def test_a_loop_over_the_row_takes_any_width(rules):
    looped = NORM_ROWS.replace("w = WEIGHT", "w = tl.load(w_ptr + cols, mask=mask)\n"
                               "    for start in range(BLOCK, n_features, BLOCK):\n"
                               "        x += tl.load(x_ptr + row * n_features + start + cols)").replace("BLOCK_VALUE", "1024")
    assert lint_code(looped, rules, select=["TL102"]).diagnostics


def test_routing_scores_logits_and_probabilities_only_in_a_routing_step():
    assert all(router_scores(t, "_router_backward_kernel") for t in ("scores", "logits", "probabilities", "probs"))
    assert not router_scores("probabilities", "softmax_backward")  # a vocabulary's probabilities
    assert not router_scores("hidden_states", "router_kernel")


def test_a_multiplier_annotated_uint32_wraps_at_2_to_the_32(rules):
    kernel = KERNEL.replace("stride_row, BLOCK", "stride_row: tl.uint32, BLOCK")
    (finding,) = lint_code(kernel, rules, select=["TL102"], options=UNBACKED).diagnostics
    assert any("computed in uint32" in n and "past 2^32" in n for n in finding.notes)
    assert "in uint32 pointer offsets wraps past 2^32" in finding.message
    (finding,) = lint_code(KERNEL, rules, select=["TL102"], options=UNBACKED).diagnostics
    assert not any("uint32" in n for n in finding.notes)
    assert "in int32 pointer offsets wraps past 2^31" in finding.message


@pytest.mark.parametrize("unpack, says", [
    ("n_rows, vocab_size = logits.shape", "counts the rows of `logits`, each as wide as the vocabulary `vocab_size`: "
                                         "one row per token"),
    ("seq_len, batch, vocab_size = logits.shape", "counts the items of `logits`, each `batch * vocab_size` wide: rows "
                                                  "of tokens as wide as the vocabulary `vocab_size`"),
])
def test_vocabulary_rows_note_says_what_an_item_holds(rules, unpack, says):
    """`[S, B, V]` logits (Megatron's vocab-parallel cross-entropy, R178s judge): an item of the leading dimension
    holds B tokens' rows, not one."""
    first = unpack.split(",")[0]
    launch = f"\n\ndef run(logits, y):\n    {unpack}\n    copy_rows[({first},)](logits, y, vocab_size, logits.stride(0), BLOCK=128)\n"
    (finding,) = lint_code(KERNEL + launch, rules, select=["TL102"]).diagnostics
    assert any(says in note for note in finding.notes), finding.notes


@pytest.mark.parametrize("name, is_cache", [
    ("key_cache", True), ("kv_caches", True), ("self.k_cache", True), ("caches", True), ("k_pool_layer", True),
    ("v_pool", True), ("k_cache_layer", True),
    # an index table, a recurrent state, rotary tables and the cache's index tensors are not the KV cache
    ("req_to_token_pool", False), ("pool", False), ("conv_cache", False), ("cos_sin_cache", False),
    ("cache_loc", False),
])
def test_kv_cache_names(name, is_cache):
    from tritonlint.analysis.provenance import kv_cache

    assert kv_cache(name) is is_cache
