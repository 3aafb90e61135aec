#!/usr/bin/env python3
"""Golden multimodal RoPE (M-RoPE) cases from an independent PyTorch float64
oracle: Hugging Face transformers' formulas for Qwen2.5-VL, Qwen3-VL, the
Qwen2-VL vision tower and Pixtral's vision encoder, run on float64 tensors.

Run from the module root with Debian's python3-torch:

    /usr/bin/python3 tools/golden/mrope_golden.py

It appends (or replaces) its cases, of kind "mrope", in
verify/testdata/golden/cases.json, writes their arrays next to it and their
specs under verify/testdata/golden/specs/.  Transcribed from transformers'
public functions, sharing nothing with verify/ or gen/:

* Qwen2.5-VL text -- Qwen2VLRotaryEmbedding.forward (inv_freq expanded to
  the 3 axes, freqs = inv_freq @ position_ids, emb = cat(freqs, freqs))
  and apply_multimodal_rotary_pos_emb (cos.split(mrope_section * 2), chunk
  i from axis i % 3, then q * cos + rotate_half(q) * sin).
* Qwen3-VL text -- Qwen3VLTextRotaryEmbedding.apply_interleaved_mrope
  (freqs_t = freqs[0]; freqs_t[..., slice(offset, section[dim] * 3, 3)] =
  freqs[dim, ..., same slice] for dim, offset = (1, 1), (2, 2)), then
  cat(freqs_t, freqs_t) and apply_rotary_pos_emb.  The pairs after the last
  h/w pair keep the t frequency (transformers, vLLM; not ggml).
* Qwen2-VL vision -- VisionRotaryEmbedding(head_dim // 2) and
  rot_pos_emb: rotary_pos_emb_full[pos_ids].flatten(1) with pos_ids the
  (row, column) of each patch, cat(emb, emb), apply_rotary_pos_emb_vision.
* Pixtral vision -- PixtralRotaryEmbedding: freqs_h = outer(h, freqs[::2]),
  freqs_w = outer(w, freqs[1::2]) over the patches_per_side grid,
  inv_freq[row * side + column], cat(x, x), rotate_half.

Positions are stored token-major, one per axis ([tokens][axes] int32).
Inputs are drawn in float32 (fixed torch seed); expected outputs are the
float64 results rounded to float32.  Arrays are raw little-endian.
"""

import json
import os

import torch

DIR = "verify/testdata/golden"
HEADS = 2
BIG = 2**31 - 1


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def default_inv_freq(base, dim):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(torch.float64) / dim))


def text_freqs(inv_freq, position_ids):
    """Qwen2VLRotaryEmbedding.forward in float64: position_ids (3, bs, T) ->
    freqs (3, bs, T, dim/2)."""
    inv_freq_expanded = inv_freq[None, None, :, None].expand(3, position_ids.shape[1], -1, 1)
    position_ids_expanded = position_ids[:, :, None, :].to(torch.float64)
    return (inv_freq_expanded @ position_ids_expanded).transpose(2, 3)


def qwen25_text(x, pos, base, head_dim, mrope_section):
    """x (T, heads, hd) float64, pos (T, 3) -> rotated (T, heads, hd)."""
    position_ids = pos.t()[:, None, :]  # (3, bs=1, T)
    freqs = text_freqs(default_inv_freq(base, head_dim), position_ids)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    sections = mrope_section * 2
    cos = torch.cat([m[i % 3] for i, m in enumerate(cos.split(sections, dim=-1))], dim=-1).unsqueeze(1)
    sin = torch.cat([m[i % 3] for i, m in enumerate(sin.split(sections, dim=-1))], dim=-1).unsqueeze(1)
    q = x.permute(1, 0, 2)[None]  # (bs, heads, T, hd)
    out = q * cos + rotate_half(q) * sin
    return out[0].permute(1, 0, 2)


def apply_interleaved_mrope(freqs, mrope_section):
    freqs_t = freqs[0].clone()
    for dim, offset in enumerate((1, 2), start=1):
        length = mrope_section[dim] * 3
        idx = slice(offset, length, 3)
        freqs_t[..., idx] = freqs[dim, ..., idx]
    return freqs_t


def qwen3_text(x, pos, base, head_dim, mrope_section):
    position_ids = pos.t()[:, None, :]
    freqs = text_freqs(default_inv_freq(base, head_dim), position_ids)
    freqs = apply_interleaved_mrope(freqs, mrope_section)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().unsqueeze(1), emb.sin().unsqueeze(1)
    q = x.permute(1, 0, 2)[None]
    out = q * cos + rotate_half(q) * sin
    return out[0].permute(1, 0, 2)


def qwen2_vision(x, pos, base, head_dim):
    """VisionRotaryEmbedding(head_dim // 2): inv_freq over dim = head_dim/2;
    rot_pos_emb gathers the table at (row, column) and flattens."""
    dim = head_dim // 2
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    seqlen = int(pos.max()) + 1
    seq = torch.arange(seqlen, dtype=torch.float64)
    full = torch.outer(seq, inv_freq)
    rotary_pos_emb = full[pos.long()].flatten(1)  # (T, head_dim/2)
    emb = torch.cat((rotary_pos_emb, rotary_pos_emb), dim=-1)
    cos, sin = emb.cos().unsqueeze(-2), emb.sin().unsqueeze(-2)
    return x * cos + rotate_half(x) * sin


def pixtral_vision(x, pos, base, head_dim, side):
    freqs = 1.0 / (base ** (torch.arange(0, head_dim, 2).to(torch.float64) / head_dim))
    h = torch.arange(side, dtype=torch.float64)
    w = torch.arange(side, dtype=torch.float64)
    freqs_h = torch.outer(h, freqs[::2])
    freqs_w = torch.outer(w, freqs[1::2])
    inv_freq = torch.cat([freqs_h[:, None, :].repeat(1, side, 1), freqs_w[None, :, :].repeat(side, 1, 1)],
                         dim=-1).reshape(-1, head_dim // 2)
    inv_freq = torch.cat((inv_freq, inv_freq), dim=-1)
    position_ids = pos[:, 0].long() * side + pos[:, 1].long()
    f = inv_freq[position_ids]
    cos, sin = f.cos().unsqueeze(-2), f.sin().unsqueeze(-2)
    return x * cos + rotate_half(x) * sin


def text_positions():
    """Text tokens (t = h = w), an image grid after them, and axes far apart
    (beyond any table, negative, near 2^31)."""
    rows = [[p, p, p] for p in (0, 1, 2, 100, 70000)]
    st = 5
    for t in range(2):
        for y in range(2):
            for x in range(3):
                rows.append([st + t, st + y, st + x])
    rows += [[12, 12, 12], [5000, 17, 3], [3, BIG, 40000], [-7, 2**20, BIG - 5], [123456789, -1, 0]]
    return torch.tensor(rows, dtype=torch.int64)


def vision_positions(side):
    rows = [[y, x] for y in range(3) for x in range(4)]
    rows += [[side - 1, 0], [0, side - 1], [side - 1, side - 1], [side // 2, 17], [40, 9]]
    return torch.tensor(rows, dtype=torch.int64)


CASES = [
    {
        "name": "gmrope_qwen25",
        "spec": "name: gmrope_qwen25\nencoding: rope\nhead_dim: 128\nlayout: half\nbase: 1000000\n"
                "max_position: 64\nmrope_section: [16, 24, 24]\n",
        "dim": 128, "pos": text_positions,
        "rot": lambda x, p: qwen25_text(x, p, 1e6, 128, [16, 24, 24]),
    },
    {
        "name": "gmrope_qwen3",
        "spec": "name: gmrope_qwen3\nencoding: rope\nhead_dim: 128\nlayout: half\nbase: 5000000\n"
                "max_position: 64\nmrope_section: [24, 20, 20]\nmrope_interleaved: true\n",
        "dim": 128, "pos": text_positions,
        "rot": lambda x, p: qwen3_text(x, p, 5e6, 128, [24, 20, 20]),
    },
    {
        "name": "gmrope_qwen2vis",
        "spec": "name: gmrope_qwen2vis\nencoding: rope\nhead_dim: 80\nlayout: half\nbase: 10000\n"
                "max_position: 16\nmrope_section: [20, 20]\nmrope_freqs: per_axis\n",
        "dim": 80, "pos": lambda: vision_positions(64),
        "rot": lambda x, p: qwen2_vision(x, p, 10000.0, 80),
    },
    {
        "name": "gmrope_pixtral",
        "spec": "name: gmrope_pixtral\nencoding: rope\nhead_dim: 64\nlayout: half\nbase: 10000\n"
                "max_position: 16\nmrope_section: [16, 16]\nmrope_freqs: alternate\n",
        "dim": 64, "pos": lambda: vision_positions(64),
        "rot": lambda x, p: pixtral_vision(x, p, 10000.0, 64, 64),
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
        pos = c["pos"]()
        tokens = pos.shape[0]
        x = (torch.rand(tokens, HEADS, dim, dtype=torch.float32) * 2 - 1) * 3
        want = c["rot"](x.to(torch.float64), pos).to(torch.float32)
        n = c["name"]
        write(n + "_x.bin", x)
        write(n + "_pos.bin", pos.to(torch.int32))
        write(n + "_want.bin", want)
        with open(os.path.join(DIR, "specs", n + ".yaml"), "w") as f:
            f.write(c["spec"])
        cases.append({"name": n, "kind": "mrope", "spec": c["spec"], "heads": HEADS, "tokens": tokens,
                      "head_dim": dim, "x": n + "_x.bin", "pos": n + "_pos.bin", "want": n + "_want.bin",
                      "scale": float(x.abs().max())})
    with open(path, "w") as f:
        json.dump(cases, f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
