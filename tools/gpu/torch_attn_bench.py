#!/usr/bin/env python3
"""Baseline for `posenc bench -gpu -attention`: PyTorch's cuDNN SDPA (no
bias) and FlexAttention with ALiBi and T5 score_mods, on the shapes of
posenc's attention bench, timed in one process with CUDA events.

Shapes (q, k, v as [batch=1][heads][tokens][head_dim]): decode, one query at
the last of lk keys (K+V read counted once, against a device-to-device copy
of the K+V bytes timed here too); causal prefill of n tokens (4 x heads x
head_dim flops per unmasked query-key pair, as posenc counts them).
FlexAttention is compiled once per shape (torch.compile of flex_attention),
outside the timed loop. T5's bias is the bucketed relative position of
HF's T5Attention._relative_position_bucket (bidirectional=False, 32
buckets, max_distance 128) looked up in a [heads][32] table.

Run on an H200 on 2026-11-27 (docs/gpu.md, "Attention on an H200") with
the timing a plain loop of calls between CUDA events. --graph times a
CUDA-graph replay of the reps calls instead (how the attention issue's
figures were taken: no launch gaps between calls), falling back to the loop,
and saying so, for a function that cannot be captured. Not run by tests or
CI.
"""

import argparse
import math
import sys

import torch


def event_ms(run):
    """The time of run() between two CUDA events, in ms."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    run()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def timed_ms(fn, reps):
    """Runs fn once (warm-up), then reps times between two CUDA events; the
    time of one run in ms."""
    fn()
    torch.cuda.synchronize()

    def loop():
        for _ in range(reps):
            fn()

    return event_ms(loop) / reps


def graph_ms(fn, reps):
    """Captures reps calls of fn in a CUDA graph (after warm-up calls on a
    side stream, as capture requires) and times one replay between two
    CUDA events, after an untimed replay; the time of one call in ms."""
    fn()
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(reps):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    return event_ms(graph.replay) / reps


GRAPH = False  # main sets it from --graph


def attempt(name, fn, reps):
    """(name, ms) of graph_ms(fn) with --graph (the loop where capture
    fails, the name saying so), else of timed_ms(fn); or None after printing
    why it failed, so that one backend's failure (a compile error, an
    unsupported shape) leaves the other rows."""
    if GRAPH:
        try:
            return name + " [graph]", graph_ms(fn, reps)
        except Exception as e:  # noqa: BLE001 - fall back to the loop
            print(f"{name}: no CUDA graph ({type(e).__name__}: {str(e)[:200]}); timed as a loop", flush=True)
            torch.cuda.synchronize()
    try:
        return name, timed_ms(fn, reps)
    except Exception as e:  # noqa: BLE001 - report any failure and go on
        print(f"{name}: FAILED: {type(e).__name__}: {str(e)[:400]}", flush=True)
        return None


def alibi_slopes(heads):
    """Press et al.'s slopes, 2^(-8h/n) for n a power of two, interleaved
    as HF's build_alibi_tensor does otherwise."""
    p = 2 ** math.floor(math.log2(heads))
    base = [2 ** (-8 * (i + 1) / p) for i in range(p)]
    if p < heads:
        extra = [2 ** (-4 * (2 * i + 1) / p) for i in range(heads - p)]
        base += extra
    return base


def t5_bucket(rel, buckets=32, max_distance=128):
    """HF T5's unidirectional bucket of rel = key - query (<= 0 sees)."""
    n = torch.clamp(-rel, min=0)
    exact = buckets // 2
    large = exact + (
        torch.log(n.float().clamp(min=1) / exact) / math.log(max_distance / exact) * (buckets - exact)
    ).to(torch.long)
    large = torch.clamp(large, max=buckets - 1)
    return torch.where(n < exact, n, large)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--keys", type=int, nargs="+", default=[32768, 131072], help="decode key counts")
    ap.add_argument("--prefill", type=int, nargs="+", default=[2048], help="causal prefill lengths")
    ap.add_argument("--dtype", choices=["f32", "f16", "bf16"], default="bf16")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--no-flex", action="store_true", help="time cuDNN SDPA only (no FlexAttention compiles)")
    ap.add_argument("--graph", action="store_true", help="time a CUDA-graph replay of the reps calls (rows marked [graph])")
    args = ap.parse_args()
    global GRAPH
    GRAPH = args.graph
    if not torch.cuda.is_available():
        sys.exit("torch_attn_bench: no CUDA device")
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    dev = torch.device("cuda")
    dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    h, hd = args.heads, args.head_dim
    esize = torch.finfo(dtype).bits // 8
    slopes = torch.tensor(alibi_slopes(h), device=dev, dtype=torch.float32)
    t5_table = torch.randn(h, 32, device=dev, dtype=torch.float32)
    flex = torch.compile(flex_attention, dynamic=False)

    def alibi(score, b, hh, qi, kj):
        return score - slopes[hh] * (qi - kj).abs()

    def t5(score, b, hh, qi, kj):
        return score + t5_table[hh, t5_bucket(kj - qi)]

    def causal(b, hh, qi, kj):
        return qi >= kj

    timing = "CUDA-graph replay of the reps calls" if args.graph else "a loop of calls between CUDA events"
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {args.dtype}, {h} heads x {hd}, {args.reps} reps, ms per call, timed as {timing}")
    print("SHAPE\tIMPL\tms\tK+V GB/s or TFLOP/s\tx copy (decode)")
    for lk in args.keys:
        q = torch.randn(1, h, 1, hd, device=dev, dtype=dtype)
        k = torch.randn(1, h, lk, hd, device=dev, dtype=dtype)
        v = torch.randn(1, h, lk, hd, device=dev, dtype=dtype)
        kv_bytes = 2 * lk * h * hd * esize
        src = torch.empty(kv_bytes, device=dev, dtype=torch.uint8)
        dst = torch.empty_like(src)
        copy_ms = timed_ms(lambda: dst.copy_(src), args.reps)
        rows = []
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
            rows.append(attempt("sdpa (no bias)", lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v), args.reps))
        if not args.no_flex:
            rows.append(attempt("flex alibi", lambda: flex(q, k, v, score_mod=alibi), args.reps))
            rows.append(attempt("flex t5", lambda: flex(q, k, v, score_mod=t5), args.reps))
        for name, ms in filter(None, rows):
            print(f"decode lk={lk}\t{name}\t{ms:.4f}\t{kv_bytes / ms / 1e6:.1f} GB/s\t{copy_ms / ms:.2f}")
        del q, k, v, src, dst
    for n in args.prefill:
        q, k, v = (torch.randn(1, h, n, hd, device=dev, dtype=dtype) for _ in range(3))
        flops = 4 * h * hd * n * (n + 1) // 2
        mask = None if args.no_flex else create_block_mask(causal, None, None, n, n, device=dev)
        rows = []
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
            rows.append(attempt("sdpa causal (no bias)",
                                lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True), args.reps))
        if not args.no_flex:
            rows.append(attempt("flex alibi", lambda: flex(q, k, v, score_mod=alibi, block_mask=mask), args.reps))
            rows.append(attempt("flex t5", lambda: flex(q, k, v, score_mod=t5, block_mask=mask), args.reps))
        for name, ms in filter(None, rows):
            print(f"causal prefill n={n}\t{name}\t{ms:.4f}\t{flops / ms / 1e9:.1f} TFLOP/s\t-")


if __name__ == "__main__":
    main()
