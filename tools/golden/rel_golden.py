#!/usr/bin/env python3
"""Golden cases for rpe_full and xl from an independent PyTorch float64 oracle.

Run from the module root (it rewrites verify/testdata/golden_rel/ and the
cases' specs under verify/testdata/golden/specs/):

    /usr/bin/python3 tools/golden/rel_golden.py   # Debian's python3-torch

Written from the papers and public code named below, sharing nothing with
verify/ or gen/:

* rpe_full -- Shaw et al. 2018, eqs. (3)-(4), as Table D-1 of the online
  appendix D of Geron's "Hands-On Machine Learning with Scikit-Learn and
  PyTorch" writes them:  e_ij = q_i . (k_j + a^K_{r(i,j)}) / sqrt(d),
  o_i = sum_j alpha_ij (v_j + a^V_{r(i,j)}), alpha = softmax_j(e).
  The relative index is the rule of gather_biases in Geron's appendix D
  notebook (github.com/ageron/handson-mlp,
  Appendix_D_relative_positional_encoding.ipynb): rel = pos_q - pos_k
  (query minus key; Shaw et al. write clip(j - i, k), the same table with
  its rows in reverse order), clamped to +-(r_max - 1), plus r_max - 1, into
  a [2 r_max - 1][d] table.
  The notebook numbers queries from 0; posenc's API puts query i at position
  qOffset + i, so pos_q below is qOffset + arange(lq) -- the only mapping
  applied.  (The appendix's prose says "clamp to +-r_max" but its code and
  its 2 r_max - 1 rows clamp to +-(r_max - 1); the code is followed.)
  Written the materializing way: the [lq][lk][d] tensors a^K[idx], a^V[idx]
  are built by indexing.

* xl -- Transformer-XL (Dai et al. 2019, section 3.3) with the content and
  position projections folded into the inputs:
  a_ij = (q_i + u) . k_j + (q_i + v) . R_{i-j}, no 1/sqrt(d), with the
  sinusoid of Vaswani et al. 2017, R^(2k) = sin(rel / base^(2k/d)),
  R^(2k+1) = cos(...), interleaved (the reference code of Dai et al.
  concatenates sines then cosines instead).  The position term is computed
  the Music Transformer way (Huang et al. 2018, section 3.4.1, the "skew"):
  (q + v) times every relative row at once, then skewed into place.  Rows run from the
  largest distance down, as Transformer-XL's pos_seq = arange(klen-1, -1, -1):
  row m holds distance qOffset + lq - 1 - m, m < lq + lk - 1 (with
  qOffset = mlen this is exactly Transformer-XL's layout; the extra lk - 1
  rows carry the negative distances of keys after the query, which
  Transformer-XL masks).  The rows r are either R itself or a random
  projection W_R R (the caller's projected table); the kernels take r as
  given, so the oracle uses r as rounded to float32.

Inputs are drawn in float32 and computed in float64; expected outputs are
the float64 results rounded to float32.  Files are raw little-endian arrays.
"""

import json
import math
import os
import sys

import torch
import torch.nn.functional as F

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
OUT = os.path.join(ROOT, "verify/testdata/golden_rel")
SPECS = os.path.join(ROOT, "verify/testdata/golden/specs")
F64 = torch.float64
gen = torch.Generator().manual_seed(1803_02155)  # Shaw et al.'s arXiv number


def draw(*shape):
    """Standard normal values drawn in float32, returned as float64."""
    return torch.randn(*shape, generator=gen, dtype=torch.float32).to(F64)


def f32(t):
    """Round a float64 tensor to float32 and back (what the files hold)."""
    return t.to(torch.float32).to(F64)


def save(case, key, t):
    """Write t as little-endian float32 to <case>_<key>.bin; name it in case."""
    name = f"{case['name']}_{key}.bin"
    data = t.to(torch.float32).contiguous().numpy().astype("<f4").tobytes()
    with open(os.path.join(OUT, name), "wb") as fh:
        fh.write(data)
    case[key] = name


def shaw(q, k, v, a_k, a_v, r_max, q_offset):
    """Shaw et al. 2018 scores e [lq][lk] and weights-to-output o [lq][d]."""
    lq, d = q.shape
    lk = k.shape[0]
    pos_q = q_offset + torch.arange(lq)  # query i sits at qOffset + i
    pos_k = torch.arange(lk)  # key j at j
    rel = pos_q[:, None] - pos_k[None, :]  # i - j, gather_biases' rel_pos
    idx = rel.clamp(-r_max + 1, r_max - 1) + r_max - 1  # [lq][lk] table rows
    rel_k = a_k[idx]  # [lq][lk][d]: a^K_{clip(i-j)}
    rel_v = a_v[idx]  # [lq][lk][d]: a^V_{clip(i-j)}
    e = torch.einsum("id,ijd->ij", q, k[None, :, :] + rel_k) / math.sqrt(d)
    # The Output kernel takes the weights as input: round alpha to float32
    # first, so the expected output is exact for the stored weights.
    alpha = f32(torch.softmax(e, dim=-1))
    o = torch.einsum("ij,ijd->id", alpha, v[None, :, :] + rel_v)
    return e, alpha, o


def sinusoid(dist, d, base):
    """R [len(dist)][d]: R[2k] = sin(dist/base^(2k/d)), R[2k+1] = cos(...)."""
    div = torch.tensor(base, dtype=F64) ** (torch.arange(0, d, 2, dtype=F64) / d)
    ang = dist.to(F64)[:, None] / div[None, :]
    out = torch.empty(len(dist), d, dtype=F64)
    out[:, 0::2] = torch.sin(ang)
    out[:, 1::2] = torch.cos(ang)
    return out


def skew(qr, lk):
    """Music Transformer's skew (Huang et al. 2018), for lq rows and
    n = lq + lk - 1 relative columns.

    Pad one zero column on the left, read the [lq][n+1] block as [n+1][lq],
    drop the first row and read the rest back as [lq][n]: row i comes out
    shifted left by lq - 1 - i, so out[i][j] = qr[i][lq - 1 - i + j].  With
    lq = lk = n (the paper's square case) this is the usual skew: pad,
    reshape, drop the first row, reshape.
    """
    lq, n = qr.shape
    padded = F.pad(qr, (1, 0))
    return padded.reshape(n + 1, lq)[1:].reshape(lq, n)[:, :lk]


def xl(q, k, r, u, v):
    """Transformer-XL scores [lq][lk]; r [lq+lk-1][d], largest distance first."""
    lk = k.shape[0]
    ac = (q + u[None, :]) @ k.T  # terms (a) + (c)
    bd = skew((q + v[None, :]) @ r.T, lk)  # terms (b) + (d)
    return ac + bd


def xl_direct(q, k, r, u, v, dists, q_offset):
    """The same scores straight from a_ij with r looked up by distance."""
    row = {int(dd): m for m, dd in enumerate(dists)}
    lq, lk = q.shape[0], k.shape[0]
    out = torch.empty(lq, lk, dtype=F64)
    for i in range(lq):
        for j in range(lk):
            rr = r[row[q_offset + i - j]]
            out[i, j] = (q[i] + u) @ k[j] + (q[i] + v) @ rr
    return out


def write_spec(name, text):
    with open(os.path.join(SPECS, name + ".yaml"), "w") as fh:
        fh.write(text)


def shaw_case(name, d, r_max, lq, lk, q_offset):
    spec = f"name: {name}\nencoding: rpe_full\nhead_dim: {d}\nr_max: {r_max}\n"
    case = dict(name=name, kind="rpe_full", spec=spec, head_dim=d, r_max=r_max,
                lq=lq, lk=lk, qoffset=q_offset)
    q, k, v = draw(lq, d), draw(lk, d), draw(lk, d)
    a_k, a_v = draw(2 * r_max - 1, d), draw(2 * r_max - 1, d)
    e, alpha, o = shaw(q, k, v, a_k, a_v, r_max, q_offset)
    for key, t in [("q", q), ("k", k), ("a_k", a_k), ("want_scores", e),
                   ("weights", alpha), ("v", v), ("a_v", a_v), ("want_output", o)]:
        save(case, key, t)
    write_spec(name, spec)
    return case


def xl_case(name, d, base, lq, lk, q_offset, project, rel_n):
    spec = f"name: {name}\nencoding: xl\nhead_dim: {d}\nbase: {base}\n"
    case = dict(name=name, kind="xl", spec=spec, head_dim=d, base=base,
                lq=lq, lk=lk, qoffset=q_offset, rel_n=rel_n)
    q, k, u, v = draw(lq, d), draw(lk, d), draw(d), draw(d)
    dists = q_offset + lq - 1 - torch.arange(lq + lk - 1)  # row m's distance
    r = sinusoid(dists, d, base)
    if project:  # the caller's W_R R, W_R random with unit-variance rows
        r = r @ (draw(d, d) / math.sqrt(d)).T
    r = f32(r)
    a = xl(q, k, r, u, v)
    direct = xl_direct(q, k, r, u, v, dists, q_offset)
    assert torch.allclose(a, direct, rtol=0, atol=1e-12), name  # skew self-check
    # Relative(dst, n): the unprojected R for distances n-1 down to 0.
    rel = sinusoid(torch.arange(rel_n - 1, -1, -1), d, base)
    for key, t in [("q", q), ("k", k), ("r", r), ("u", u), ("v", v),
                   ("want_scores", a), ("want_relative", rel)]:
        save(case, key, t)
    write_spec(name, spec)
    return case


def main():
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(SPECS, exist_ok=True)
    cases = [
        # odd head_dim; lq != lk; qOffset > 0; clipping on both sides
        shaw_case("gshaw_d7", 7, 4, 5, 13, 3),
        # r_max = 1: one row for every distance
        shaw_case("gshaw_r1", 12, 1, 6, 9, 2),
        # r_max > L: no distance is clipped (keys after and before the query)
        shaw_case("gshaw_wide", 33, 40, 19, 37, 5),
        # Shaw's base model (d 64, k = 16); lk not a multiple of any width
        shaw_case("gshaw_base", 64, 17, 9, 70, 40),
        # far query: every key clipped to the top row
        shaw_case("gshaw_far", 16, 5, 4, 21, 123456789),
        # unprojected R (r = R, Dai et al.'s a_ij with W_R = I); keys after the query
        xl_case("gxl_d8", 8, 10000, 5, 12, 7, False, 40),
        # Music Transformer's square case (lq = lk), non-default base, qOffset 0
        xl_case("gxl_sq", 6, 500, 10, 10, 0, True, 25),
        # Transformer-XL base head; distances near 123456789
        xl_case("gxl_far", 64, 10000, 7, 45, 123456789, True, 150),
        # one query, head_dim not a multiple of any vector width
        xl_case("gxl_q1", 34, 10000, 1, 33, 1000, False, 3),
    ]
    with open(os.path.join(OUT, "cases.json"), "w") as fh:
        json.dump(cases, fh, indent=1)
        fh.write("\n")
    print(f"{len(cases)} cases, torch {torch.__version__}")


if __name__ == "__main__":
    main()
