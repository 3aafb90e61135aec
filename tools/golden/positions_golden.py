#!/usr/bin/env python3
"""Golden cases for package positions, computed by transformers' own code.

The oracle is the code of Hugging Face transformers itself, run with torch:
this script pulls the functions below out of transformers' source files with
`ast` (by class and method name), executes them, and binds each method to a
small stand-in object that carries only the config attributes it reads.

    function                                          transformers commit
    Qwen2VLModel.get_rope_index                       00b676f8f0489b88652a31d70751cc540dd06305
    Qwen2VisionTransformerPretrainedModel.rot_pos_emb 00b676f8f0489b88652a31d70751cc540dd06305
    Qwen2_5_VLModel.get_rope_index                    00b676f8f0489b88652a31d70751cc540dd06305
    Qwen2_5_VLForConditionalGeneration.get_rope_index efa7189c5546a94e8c1194b2ccc6669e0f7ad65e
    Qwen3VLModel.get_rope_index                       00709b862bb8f14a5435bb7195592579168496e4
    Qwen3VLVisionModel.rot_pos_emb                    00709b862bb8f14a5435bb7195592579168496e4
    position_ids_in_meshgrid (pixtral)                0233e509531ace915c8241b4c16c8032a583279c

Qwen2.5-VL appears twice because its video time ids changed between the two
commits: efa7189c multiplies the frame index by second_per_grid_t in float32
and truncates the product (the Qwen reference code), 00b676f8 first casts
second_per_grid_t to int64 (0.5 s becomes 0).  The two agree whenever
second_per_grid_t is a whole number; the cases with fractional values are run
through both (Go: Config.TruncateSecondsPerGrid).

Each --root COMMIT=DIR names a transformers checkout (or any directory holding
src/transformers/models/... at that commit); the same file may serve several
commits when the functions did not change.  torch: Debian's python3-torch
(1.13) was used.

    /usr/bin/python3 tools/golden/positions_golden.py \\
        --root 00b676f8=/path/to/transformers@00b676f8 \\
        --root efa7189c=/path/to/transformers@efa7189c \\
        --root 00709b86=/path/to/transformers@00709b86 \\
        --root 0233e509=/path/to/transformers@0233e509

It writes positions/testdata/{qwen_rope_index,vision_rot_pos,pixtral}.json.

Configs (real checkpoints):
  Qwen/Qwen2-VL-7B-Instruct config.json: image_token_id 151655,
    video_token_id 151656, vision_start_token_id 151652,
    vision_config.spatial_merge_size 2 (also transformers' Qwen2VLConfig
    defaults).
  Qwen/Qwen2.5-VL-7B-Instruct config.json (importer/testdata/qwen25_vl_7b.json
    for the ids, merge size and tokens_per_second 2; vision_start_token_id
    151652 from the checkpoint's config.json).
  Qwen/Qwen3-VL-8B-Instruct config.json (importer/testdata/qwen3_vl_8b.json):
    same token ids, spatial_merge_size 2.
  mistral-community/pixtral-12b vision_config
    (importer/testdata/pixtral_12b_vision.json): image_size 1024,
    patch_size 16, so max_width = 64 patches.

Decode steps: Qwen2VLModel.forward (and the 2.5 and 3 copies) computes the
positions of a cached step inline, not in a function this script can call:
position_ids = arange(seq_length) + cache_position[0] + rope_deltas, expanded
to the three axes.  decode_positions below is that expression.
"""

import argparse
import ast
import json
import os
import textwrap
import types
import typing

import torch

# Qwen2-VL / 2.5 / 3 token ids; PAD is <|endoftext|>, the tokenizer's pad token.
IMAGE, VIDEO, VSTART, VEND, PAD = 151655, 151656, 151652, 151653, 151643

CONFIGS = {
    "qwen2_vl_7b": dict(family="qwen2_vl", image_token_id=IMAGE, video_token_id=VIDEO,
                        vision_start_token_id=VSTART, spatial_merge_size=2),
    "qwen25_vl_7b": dict(family="qwen2_5_vl", image_token_id=IMAGE, video_token_id=VIDEO,
                         vision_start_token_id=VSTART, spatial_merge_size=2, tokens_per_second=2),
    "qwen3_vl_8b": dict(family="qwen3_vl", image_token_id=IMAGE, video_token_id=VIDEO,
                        vision_start_token_id=VSTART, spatial_merge_size=2),
}

FILES = {
    "qwen2_vl": "src/transformers/models/qwen2_vl/modeling_qwen2_vl.py",
    "qwen2_5_vl": "src/transformers/models/qwen2_5_vl/modeling_qwen2_5_vl.py",
    "qwen3_vl": "src/transformers/models/qwen3_vl/modeling_qwen3_vl.py",
    "pixtral": "src/transformers/models/pixtral/modeling_pixtral.py",
}

COMMITS = {
    "00b676f8": "00b676f8f0489b88652a31d70751cc540dd06305",
    "efa7189c": "efa7189c5546a94e8c1194b2ccc6669e0f7ad65e",
    "00709b86": "00709b862bb8f14a5435bb7195592579168496e4",
    "0233e509": "0233e509531ace915c8241b4c16c8032a583279c",
}


def extract(path, cls, name):
    """Returns the function `name` (a method of class `cls`, or a module-level
    function when cls is None) compiled from transformers' source file."""
    with open(path) as f:
        src = f.read()
    tree = ast.parse(src)
    scope = tree.body
    if cls is not None:
        scope = next(n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    node = next(n for n in scope if isinstance(n, ast.FunctionDef) and n.name == name)
    node.decorator_list = []
    code = textwrap.dedent(ast.get_source_segment(src, node))
    ns = {"torch": torch, "Optional": typing.Optional, "Tuple": typing.Tuple, "List": typing.List}
    exec(compile(code, f"{path}:{cls}.{name}", "exec"), ns)
    return ns[name]


def stand_in(cfg):
    vision = types.SimpleNamespace(spatial_merge_size=cfg["spatial_merge_size"],
                                   tokens_per_second=cfg.get("tokens_per_second"))
    config = types.SimpleNamespace(vision_config=vision, image_token_id=cfg["image_token_id"],
                                   video_token_id=cfg["video_token_id"],
                                   vision_start_token_id=cfg["vision_start_token_id"])
    return types.SimpleNamespace(config=config)


def decode_positions(rope_deltas, cache_position0, seq_length):
    batch = rope_deltas.shape[0]
    pos = torch.arange(seq_length).view(1, -1).expand(batch, -1) + (cache_position0 + rope_deltas)
    return pos.unsqueeze(0).expand(3, -1, -1)


# ---- token sequences -------------------------------------------------------

def text(n, start=1000):
    return [start + i for i in range(n)]


def image(grid, merge=2):
    t, h, w = grid
    return [VSTART] + [IMAGE] * (t * h * w // merge // merge) + [VEND]


def video(grid, merge=2):
    t, h, w = grid
    return [VSTART] + [VIDEO] * (t * h * w // merge // merge) + [VEND]


def video_frames(grid, stamps, merge=2):
    """Qwen3-VL: every frame is its own vision block after its timestamp text."""
    t, h, w = grid
    out = []
    for i in range(t):
        out += text(stamps, 2000 + 10 * i) + [VSTART] + [VIDEO] * (h * w // merge // merge) + [VEND]
    return out


def left_pad(rows):
    n = max(len(r) for r in rows)
    ids = [[PAD] * (n - len(r)) + r for r in rows]
    mask = [[0] * (n - len(r)) + [1] * len(r) for r in rows]
    return ids, mask


# ---- cases -------------------------------------------------------------------

def rope_cases(family):
    """(name, ids, mask, images, videos, seconds) for one family."""
    qwen3 = family == "qwen3_vl"
    vid = (lambda g: video_frames(g, 3)) if qwen3 else video
    cases = [
        ("text_only", [text(9)], None, None, None, None),
        ("text_only_left_pad", *left_pad([text(7), text(4)]), None, None, None),
        ("text_only_pad_one_token", *left_pad([text(5), text(1)]), None, None, None),
        ("one_image", [text(5) + image((1, 4, 6)) + text(6)], None, [[1, 4, 6]], None, None),
        ("image_first_token", [image((1, 2, 2)) + text(3)], None, [[1, 2, 2]], None, None),
        ("image_last", [text(4) + image((1, 4, 4))], None, [[1, 4, 4]], None, None),
        ("several_images_odd_grids",
         [text(3) + image((1, 2, 6)) + text(2) + image((1, 4, 10)) + text(1) + image((1, 6, 4)) + text(4)],
         None, [[1, 2, 6], [1, 4, 10], [1, 6, 4]], None, None),
        ("video", [text(4) + vid((3, 4, 4)) + text(5)], None, None, [[3, 4, 4]], None),
        ("video_odd_grid", [text(2) + vid((2, 2, 6)) + text(3)], None, None, [[2, 2, 6]], None),
        ("image_then_video",
         [text(3) + image((1, 4, 4)) + text(2) + vid((2, 4, 6)) + text(3)],
         None, [[1, 4, 4]], [[2, 4, 6]], None),
        ("video_then_image",
         [text(2) + vid((4, 2, 2)) + text(2) + image((1, 2, 4)) + text(2)],
         None, [[1, 2, 4]], [[4, 2, 2]], None),
        ("two_videos_two_images",
         [text(2) + vid((2, 2, 2)) + image((1, 2, 2)) + text(1) + vid((3, 2, 4)) + image((1, 4, 2)) + text(3)],
         None, [[1, 2, 2], [1, 4, 2]], [[2, 2, 2], [3, 2, 4]], None),
        ("batch2_left_pad_images",
         *left_pad([text(2) + image((1, 4, 4)) + text(3),
                    text(1) + image((1, 2, 2)) + text(1) + image((1, 2, 4)) + text(2)]),
         [[1, 4, 4], [1, 2, 2], [1, 2, 4]], None, None),
        ("batch2_left_pad_text_row",
         *left_pad([text(3), text(2) + image((1, 4, 6)) + text(4)]),
         [[1, 4, 6]], None, None),
        ("batch2_left_pad_mixed",
         *left_pad([text(1) + vid((2, 2, 4)) + text(2),
                    text(3) + image((1, 2, 2)) + text(1)]),
         [[1, 2, 2]], [[2, 2, 4]], None),
        ("image_grid_t2", [text(2) + image((2, 2, 4)) + text(2)], None, [[2, 2, 4]], None, None),
        # transformers raises on these (IndexError, RuntimeError): Go must refuse them too.
        ("err_vision_start_last", [text(3) + [VSTART]], None, [[1, 2, 2]], None, None),
        ("err_missing_grid", [text(2) + image((1, 2, 2)) + image((1, 2, 2))], None, [[1, 2, 2]], None, None),
        ("err_too_few_tokens", [text(2) + [VSTART, IMAGE, IMAGE, VEND]], None, [[1, 4, 4]], None, None),
        ("err_empty_row", [text(2) + image((1, 2, 2)), [PAD] * 5], [[1] * 5, [0] * 5], [[1, 2, 2]], None, None),
    ]
    if family == "qwen2_5_vl":
        for s in (1.0, 2.0, 0.5, 1.5, 0.3, 0.1, 3.7):
            cases.append((f"video_seconds_{s}", [text(2) + video((5, 2, 4)) + text(3)], None, None,
                          [[5, 2, 4]], [s]))
        cases.append(("videos_seconds_mixed",
                      [text(1) + video((3, 2, 2)) + image((1, 2, 2)) + video((4, 2, 2)) + text(1)], None,
                      [[1, 2, 2]], [[3, 2, 2], [4, 2, 2]], [0.5, 2.5]))
        cases.append(("image_grid_t2_seconds", [text(2) + image((2, 2, 4)) + video((2, 2, 2)) + text(2)], None,
                      [[2, 2, 4]], [[2, 2, 2]], [2.0]))
    if qwen3:
        cases.append(("video_timestamps_long", [text(3) + video_frames((6, 4, 6), 5) + text(4)], None, None,
                      [[6, 4, 6]], None))
        cases.append(("videos_and_image_timestamps",
                      [text(2) + video_frames((2, 2, 2), 2) + image((1, 4, 4)) + video_frames((3, 2, 4), 4) + text(1)],
                      None, [[1, 4, 4]], [[2, 2, 2], [3, 2, 4]], None))
    return cases


def run_rope(fn, cfg, name, ids, mask, images, videos, seconds, with_seconds):
    case = {"name": name, "input_ids": ids, "attention_mask": mask, "image_grid_thw": images,
            "video_grid_thw": videos, "second_per_grid_ts": seconds}
    args = [torch.tensor(ids, dtype=torch.long),
            torch.tensor(images, dtype=torch.long) if images is not None else None,
            torch.tensor(videos, dtype=torch.long) if videos is not None else None]
    if with_seconds:
        # the processor hands second_per_grid_ts over as a float32 tensor
        args.append(torch.tensor(seconds, dtype=torch.float32) if seconds is not None else None)
    args.append(torch.tensor(mask, dtype=torch.long) if mask is not None else None)
    try:
        pos, deltas = fn(stand_in(cfg), *args)
    except Exception as e:  # transformers refused the input
        case["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:200]
        return case
    case["position_ids"] = pos.tolist()
    case["rope_deltas"] = deltas.reshape(-1).tolist()
    length = len(ids[0])
    case["decode"] = [
        {"cache_position": c, "seq_length": n, "position_ids": decode_positions(deltas, c, n).tolist()}
        for c, n in ((length, 1), (length + 1, 1), (length + 7, 3))
    ]
    return case


def rope_index(roots):
    variants = [
        ("qwen2_vl_7b", "qwen2_vl", "00b676f8", "Qwen2VLModel", False, False),
        ("qwen25_vl_7b", "qwen2_5_vl", "efa7189c", "Qwen2_5_VLForConditionalGeneration", True, False),
        ("qwen25_vl_7b", "qwen2_5_vl", "00b676f8", "Qwen2_5_VLModel", True, True),
        ("qwen3_vl_8b", "qwen3_vl", "00709b86", "Qwen3VLModel", False, False),
    ]
    out = []
    for cfg_name, family, commit, cls, with_seconds, truncate in variants:
        path = os.path.join(roots[commit], FILES[family])
        fn = extract(path, cls, "get_rope_index")
        cfg = CONFIGS[cfg_name]
        cases = [run_rope(fn, cfg, *c, with_seconds) for c in rope_cases(family)]
        out.append({"config": cfg_name, "family": family, "transformers_commit": COMMITS[commit],
                    "function": f"{cls}.get_rope_index", "truncate_seconds_per_grid": truncate,
                    "image_token_id": cfg["image_token_id"], "video_token_id": cfg["video_token_id"],
                    "vision_start_token_id": cfg["vision_start_token_id"],
                    "spatial_merge_size": cfg["spatial_merge_size"],
                    "tokens_per_second": cfg.get("tokens_per_second", 0), "cases": cases})
    return out


VISION_GRIDS = [
    [[1, 4, 4]],
    [[1, 2, 6]],
    [[1, 4, 10]],
    [[3, 6, 4]],
    [[1, 2, 2], [2, 4, 6], [1, 10, 2]],
    [[1, 36, 52]],  # a 504x728 image at patch 14
]


def vision_rot_pos(roots):
    out = []
    for family, commit, cls in (("qwen2_vl", "00b676f8", "Qwen2VisionTransformerPretrainedModel"),
                                ("qwen3_vl", "00709b86", "Qwen3VLVisionModel")):
        fn = extract(os.path.join(roots[commit], FILES[family]), cls, "rot_pos_emb")
        # rotary_pos_emb(n) is a table of n rows; a one-column table holding
        # the row index turns the gathered frequencies into the ids themselves.
        model = types.SimpleNamespace(spatial_merge_size=2,
                                      rotary_pos_emb=lambda n: torch.arange(int(n)).unsqueeze(1))
        cases = []
        for grids in VISION_GRIDS:
            ids = fn(model, torch.tensor(grids, dtype=torch.long))
            cases.append({"grid_thw": grids, "pos_ids": ids.tolist()})
        out.append({"family": family, "transformers_commit": COMMITS[commit],
                    "function": f"{cls}.rot_pos_emb", "spatial_merge_size": 2, "cases": cases})
    return out


def pixtral(roots):
    fn = extract(os.path.join(roots["0233e509"], FILES["pixtral"]), None, "position_ids_in_meshgrid")
    max_width = 1024 // 16
    cases = []
    for sizes in ([[64, 64]], [[3, 5]], [[1, 1], [2, 7], [64, 1], [1, 64]], [[17, 40], [40, 17]]):
        embeds = [torch.zeros(1, h, w) for h, w in sizes]
        cases.append({"patch_grids": sizes, "max_width": max_width,
                      "position_ids": fn(embeds, max_width).tolist()})
    return [{"config": "pixtral_12b_vision", "transformers_commit": COMMITS["0233e509"],
             "function": "position_ids_in_meshgrid", "cases": cases}]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", action="append", default=[], help="COMMIT=DIR")
    ap.add_argument("--out", default="positions/testdata")
    a = ap.parse_args()
    roots = dict(r.split("=", 1) for r in a.root)
    missing = [c for c in COMMITS if c not in roots]
    if missing:
        ap.error("need --root for " + ", ".join(missing))
    os.makedirs(a.out, exist_ok=True)
    for name, data in (("qwen_rope_index", rope_index(roots)), ("vision_rot_pos", vision_rot_pos(roots)),
                       ("pixtral", pixtral(roots))):
        with open(os.path.join(a.out, name + ".json"), "w") as f:
            json.dump(data, f, separators=(",", ":"))
            f.write("\n")


if __name__ == "__main__":
    main()
