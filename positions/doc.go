// Package positions builds the position ids that multimodal models feed to
// their rotary embeddings, as Hugging Face transformers computes them, for
// engines that apply the rotation with a posenc-generated package:
//
//   - [Config.RopeIndex]: the (t, h, w) ids of every token of a Qwen2-VL,
//     Qwen2.5-VL or Qwen3-VL prompt, text, images and videos, and the
//     rope_deltas of each row (get_rope_index);
//   - [Decode] and [Index.Decode]: the ids of the tokens generated after the
//     prompt, cache position plus rope_deltas on every axis;
//   - [VisionPatchPositions]: the (row, column) id of each patch of the Qwen
//     vision towers, in their 2×2 merge-window order (rot_pos_emb);
//   - [PixtralPositionIDs] and [PixtralRowCol]: Pixtral's patch ids
//     (position_ids_in_meshgrid) and the (row, column) pairs behind them.
//
// Every builder returns its ids token-major, one int32 per axis per token
// (pos[t*axes+a]), which is the pos argument of a generated package's
// ApplyMRoPE, ApplyQKMRoPE and InverseMRoPE. Bad input is reported as an
// error wrapping [ErrInvalid] or [ErrOverflow]; no builder panics.
//
// The builders are checked against transformers' own functions, run by
// tools/golden/positions_golden.py; docs/positions.md explains each one.
package positions
