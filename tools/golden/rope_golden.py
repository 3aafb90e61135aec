#!/usr/bin/env python3
"""Golden RoPE cases for the scaling rules of Llama 4 and DeepSeek, from an
independent PyTorch float64 oracle.

Run from the module root with Debian's python3-torch:

    /usr/bin/python3 tools/golden/rope_golden.py

It appends (or replaces) its cases in verify/testdata/golden/cases.json,
writes their arrays next to it and their specs under
verify/testdata/golden/specs/.  Written from Hugging Face transformers'
public functions, sharing nothing with verify/ or gen/:

* inverse frequencies -- modeling_rope_utils._compute_llama3_parameters and
  _compute_yarn_parameters (with get_mscale, find_correction_dim,
  find_correction_range, linear_ramp_factor), transcribed with float64
  tensors.  The llama3 case has Llama 4 Scout's empty smoothing band
  (low_freq_factor = high_freq_factor = 1): HF's torch.where keeps the
  frequencies whose wavelength is below the edge and divides the others,
  and the smoothing branch (0/0 there) is never selected.  The yarn case
  has DeepSeek's mscale / mscale_all_dim (cos and sin are multiplied by
  get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)).
* rotation -- the interleaved pairs as complex numbers, as
  modeling_llama4.apply_rotary_emb and DeepSeek's apply_rotary_emb do:
  view_as_complex(x.reshape(..., -1, 2)) * polar(A, pos * inv_freq).

Inputs are drawn in float32 (fixed torch seed); expected outputs are the
float64 results rounded to float32.  Arrays are raw little-endian.
"""

import json
import math
import os

import torch

DIR = "verify/testdata/golden"
POS = [0, 3, 100, 2047, 2048, 8191, 8192, 32768, 500000, 3000000, 123456789]
HEADS = 2


def default_inv_freq(base, dim):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(torch.float64) / dim))


def llama3_inv_freq(base, dim, factor, low_freq_factor, high_freq_factor, old_context_len):
    inv_freq = default_inv_freq(base, dim)
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    with torch.no_grad():
        denom = high_freq_factor - low_freq_factor
        if denom == 0:
            # Python float division by zero raises where torch divides to
            # inf/nan; the branch is unselected either way (checked below).
            smooth_factor = torch.full_like(wavelen, float("nan"))
        else:
            smooth_factor = (old_context_len / wavelen - low_freq_factor) / denom
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    inv_freq_llama = torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
    assert not torch.isnan(inv_freq_llama).any(), "a wavelength on the band edge"
    return inv_freq_llama, 1.0


def get_mscale(scale, mscale=1):
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def yarn_inv_freq(base, dim, factor, original_max_position_embeddings, beta_fast, beta_slow, mscale, mscale_all_dim):
    attention_factor = float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))

    def find_correction_dim(num_rotations):
        return (dim * math.log(original_max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    low = max(math.floor(find_correction_dim(beta_fast)), 0)
    high = min(math.ceil(find_correction_dim(beta_slow)), dim - 1)
    if low == high:
        high += 0.001
    linear_func = (torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)
    ramp = torch.clamp(linear_func, 0, 1)
    pos_freqs = base ** (torch.arange(0, dim, 2).to(torch.float64) / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)
    extrapolation_factor = 1 - ramp
    inv_freq = inv_freq_interpolation * (1 - extrapolation_factor) + inv_freq_extrapolation * extrapolation_factor
    return inv_freq, attention_factor


def rotate_interleaved(x, pos, inv_freq, attn):
    """x: [tokens][heads][dim] float64; complex multiply of pairs (2i, 2i+1)."""
    angles = torch.outer(torch.tensor(pos, dtype=torch.float64), inv_freq)
    freqs_cis = torch.polar(torch.full_like(angles, attn), angles)
    xc = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(xc * freqs_cis[:, None, :]).flatten(2)


CASES = [
    {
        "name": "grope_llama3_empty",
        "spec": "name: grope_llama3_empty\nencoding: rope\nhead_dim: 128\nlayout: interleaved\nbase: 500000\n"
                "scaling:\n  type: llama3\n  factor: 16\n  original_max_position: 8192\n"
                "  low_freq_factor: 1\n  high_freq_factor: 1\n",
        "dim": 128,
        "freqs": lambda: llama3_inv_freq(500000.0, 128, 16.0, 1.0, 1.0, 8192),
    },
    {
        "name": "grope_yarn_ds",
        "spec": "name: grope_yarn_ds\nencoding: rope\nhead_dim: 64\nlayout: interleaved\nbase: 10000\n"
                "scaling:\n  type: yarn\n  factor: 40\n  original_max_position: 4096\n"
                "  beta_fast: 32\n  beta_slow: 1\n  mscale: 1\n  mscale_all_dim: 0.707\n",
        "dim": 64,
        "freqs": lambda: yarn_inv_freq(10000.0, 64, 40.0, 4096, 32, 1, 1.0, 0.707),
    },
]


def write(name, tensor):
    with open(os.path.join(DIR, name), "wb") as f:
        f.write(tensor.contiguous().numpy().astype("<f4" if tensor.dtype == torch.float32 else "<i4").tobytes())


def main():
    torch.manual_seed(15)
    path = os.path.join(DIR, "cases.json")
    with open(path) as f:
        cases = json.load(f)
    names = {c["name"] for c in CASES}
    cases = [c for c in cases if c["name"] not in names]
    for c in CASES:
        dim = c["dim"]
        x = (torch.rand(len(POS), HEADS, dim, dtype=torch.float32) * 2 - 1) * 3
        inv_freq, attn = c["freqs"]()
        want = rotate_interleaved(x.to(torch.float64), POS, inv_freq, attn).to(torch.float32)
        n = c["name"]
        write(n + "_x.bin", x)
        write(n + "_pos.bin", torch.tensor(POS, dtype=torch.int32))
        write(n + "_want.bin", want)
        with open(os.path.join(DIR, "specs", n + ".yaml"), "w") as f:
            f.write(c["spec"])
        cases.append({"name": n, "kind": "rope", "spec": c["spec"], "heads": HEADS, "tokens": len(POS),
                      "head_dim": dim, "x": n + "_x.bin", "pos": n + "_pos.bin", "want": n + "_want.bin",
                      "scale": float(x.abs().max())})
    with open(path, "w") as f:
        json.dump(cases, f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
