#!/usr/bin/env python3
"""Baseline for `posenc bench -gpu`: torch.compile of Hugging Face's
apply_rotary_pos_emb (transformers.models.llama.modeling_llama) at the shape
of posenc's apply_qk bench, against a device-to-device copy timed in the same
process.

Shape: q and k of [tokens][heads][head_dim] (posenc's [token][head][dim]
layout; HF's function takes it with unsqueeze_dim=2), positions 0..tokens-1.
Bytes moved, as posenc counts them: 2 x the bytes of q and k (read once,
written once), for the kernel and for the copy of the same bytes; cos and sin
are not counted. HF's function is out of place (it allocates q_embed and
k_embed); its cos and sin tables are computed once, outside the timed loop,
as a model shares them across layers.

Not run by tests or CI. See docs/gpu.md.
"""

import argparse
import sys

import torch


def timed_ms(fn, reps):
    """Runs fn once (warm-up), then reps times between two CUDA events."""
    fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, nargs="+", default=[16, 4096])
    ap.add_argument("--heads", type=int, default=32, help="heads of q and of k")
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--base", type=float, default=10000.0, help="rope_theta")
    ap.add_argument("--dtype", choices=["f32", "f16", "bf16"], default="f32")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--mode", default="default", help="torch.compile mode, e.g. max-autotune")
    args = ap.parse_args()

    try:
        from transformers.models.llama.modeling_llama import apply_rotary_pos_emb
    except ImportError as e:
        sys.exit(f"torch_rope_bench: needs transformers: {e}")
    if not torch.cuda.is_available():
        sys.exit("torch_rope_bench: no CUDA device")

    dev = torch.device("cuda")
    dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    hd = args.head_dim
    rope = torch.compile(apply_rotary_pos_emb, mode=args.mode, dynamic=False)

    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(dev)}; "
          f"torch.compile(apply_rotary_pos_emb, mode={args.mode!r}), {args.reps} calls, "
          f"then {args.reps} device-to-device copies, each after a warm-up, timed with CUDA events")
    print("GB/s = 2 x bytes of q and k / time (read + write), as posenc bench -gpu; "
          "x copy = kernel GB/s / copy GB/s")
    print(f"{'SHAPE':<48} {'MiB':>8} {'KERNEL GB/s':>12} {'D2D COPY GB/s':>14} {'x copy':>7}")
    for n in args.tokens:
        q = torch.randn(1, n, args.heads, hd, device=dev, dtype=dtype)
        k = torch.randn(1, n, args.heads, hd, device=dev, dtype=dtype)
        # LlamaRotaryEmbedding's default rope: cat(freqs, freqs), float32.
        inv_freq = 1.0 / args.base ** (torch.arange(0, hd, 2, device=dev, dtype=torch.float32) / hd)
        freqs = torch.arange(n, device=dev, dtype=torch.float32)[:, None] * inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)[None]
        cos, sin = emb.cos().to(dtype), emb.sin().to(dtype)

        want_q, want_k = apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=2)
        got_q, got_k = rope(q, k, cos, sin, unsqueeze_dim=2)
        # The compiled function rounds once where eager rounds each product
        # to the storage type: a few ulps apart in 16-bit storage (at
        # |x| ~ 4, a bf16 ulp is 2^-6 ~ 0.016; 4 of 16.8M elements differed
        # by 0.0137 on an H100, beyond the 0.01 first used here).
        tol = {torch.float32: 1e-5, torch.float16: 1e-2, torch.bfloat16: 4e-2}[dtype]
        torch.testing.assert_close(got_q, want_q, rtol=tol, atol=tol)
        torch.testing.assert_close(got_k, want_k, rtol=tol, atol=tol)

        tensor = (q.numel() + k.numel()) * q.element_size()
        kernel_ms = timed_ms(lambda: rope(q, k, cos, sin, unsqueeze_dim=2), args.reps)
        src = torch.empty(tensor, dtype=torch.uint8, device=dev).fill_(1)
        dst = torch.empty_like(src)
        copy_ms = timed_ms(lambda: dst.copy_(src), args.reps)

        def gbs(ms):
            return 2 * tensor * args.reps / (ms * 1e-3) / 1e9

        shape = f"tokens={n} q_heads={args.heads} k_heads={args.heads} head_dim={hd} {args.dtype}"
        print(f"{shape:<48} {tensor / 2**20:>8.2f} {gbs(kernel_ms):>12.1f} {gbs(copy_ms):>14.1f} "
              f"{copy_ms / kernel_ms:>7.2f}")


if __name__ == "__main__":
    main()
