package positions

import (
	"math"
)

// RopeIndex returns the (t, h, w) ids of every token of a prompt batch and
// the rope_deltas of its rows, as transformers' get_rope_index
// (Qwen2VLModel, Qwen2_5_VLModel, Qwen3VLModel) computes them.
//
// Text tokens count up from 0 on all three axes. A vision block, a
// VisionStartTokenID followed by the image or video tokens of one grid,
// takes T·(H/m)·(W/m) tokens (m the SpatialMergeSize) numbered frame by
// frame, row by row: token (f, r, c) gets (s + time(f), s + r, s + c), s
// the id the next text token would have had, and the text after the block
// resumes at one past the block's largest id. time(f) is f for Qwen2VL,
// see TokensPerSecond and TruncateSecondsPerGrid for Qwen25VL, and 0 for a
// Qwen3VL video, whose frames are separate blocks. Padded tokens (Mask
// false) are skipped and get id 1. With no grids at all every row is text:
// its real tokens count up from 0 and padding gets 1.
//
// Feed row b to the text model's package, e.g. generated/qwen25_vl_7b:
//
//	qwen25_vl_7b.ApplyQKMRoPE(q, k, ix.Pos[b], qHeads, kHeads)
//
// and keep ix.Deltas[b] for the decode steps (Decode). RopeIndex refuses,
// with an error, a grid dimension ≤ 0 or not divisible by the merge size, a
// vision block whose tokens do not match its grid, grids left over or
// missing, and ids beyond int32.
func (c Config) RopeIndex(in Input) (*Index, error) {
	length, err := c.checkInput(in)
	if err != nil {
		return nil, err
	}
	ix := &Index{Pos: make([][]int32, len(in.IDs)), Deltas: make([]int64, len(in.IDs))}
	if len(in.Images) == 0 && len(in.Videos) == 0 {
		for b := range in.IDs {
			ix.Pos[b], ix.Deltas[b] = textRow(in.Mask, b, length)
		}
		return ix, nil
	}
	cur := &gridCursor{cfg: c, in: in}
	for b, ids := range in.IDs {
		tokens, at := compact(ids, in.Mask, b)
		if len(tokens) == 0 {
			return nil, invalid("row %d has no unmasked token", b)
		}
		pos, largest, err := c.visionRow(tokens, cur)
		if err != nil {
			return nil, rowError(b, err)
		}
		row := make([]int32, 3*length)
		for i := range row {
			row[i] = 1
		}
		for j, t := range at {
			copy(row[3*t:3*t+3], pos[3*j:3*j+3])
		}
		ix.Pos[b] = row
		ix.Deltas[b] = largest + 1 - int64(length)
	}
	if err := cur.done(); err != nil {
		return nil, err
	}
	return ix, nil
}

// textRow numbers the real tokens of row b 0, 1, … and its padding 1; the
// delta is the row's largest id, padding included, plus one less its length
// (get_rope_index's branch without grids: cumsum of the mask less one,
// masked_fill 1).
func textRow(mask [][]bool, b, length int) ([]int32, int64) {
	row := make([]int32, 3*length)
	next, largest := int32(0), int32(0)
	for t := 0; t < length; t++ {
		p := int32(1)
		if mask == nil || mask[b][t] {
			p = next
			next++
		}
		row[3*t], row[3*t+1], row[3*t+2] = p, p, p
		largest = max(largest, p)
	}
	return row, int64(largest) + 1 - int64(length)
}

// compact returns the unmasked tokens of row b and their indexes in the row.
func compact(ids []int32, mask [][]bool, b int) (tokens []int32, at []int) {
	for t, id := range ids {
		if mask == nil || mask[b][t] {
			tokens = append(tokens, id)
			at = append(at, t)
		}
	}
	return tokens, at
}

// visionRow numbers the unmasked tokens of one row, token-major, and returns
// the largest id.
func (c Config) visionRow(tokens []int32, cur *gridCursor) ([]int32, int64, error) {
	n := len(tokens)
	images, videos := 0, 0
	for i, t := range tokens {
		if t != c.VisionStartTokenID {
			continue
		}
		if i+1 == n {
			return nil, 0, invalid("a vision start token ends the row")
		}
		switch tokens[i+1] {
		case c.ImageTokenID:
			images++
		case c.VideoTokenID:
			videos++
		}
	}
	w := rowWriter{pos: make([]int32, 3*n)}
	st := 0
	for range images + videos {
		// The next block is whichever of the next image token and the next
		// video token comes first, among the kinds with blocks left.
		edImage, edVideo := n+1, n+1
		if images > 0 {
			if edImage = indexFrom(tokens, c.ImageTokenID, st); edImage < 0 {
				return nil, 0, invalid("an image block has no image token after token %d", st)
			}
		}
		if videos > 0 {
			if edVideo = indexFrom(tokens, c.VideoTokenID, st); edVideo < 0 {
				return nil, 0, invalid("a video block has no video token after token %d", st)
			}
		}
		var blk block
		var err error
		if edImage < edVideo {
			images--
			blk, err = cur.nextImage()
			blk.start, blk.token = edImage, c.ImageTokenID
		} else {
			videos--
			blk, err = cur.nextVideo()
			blk.start, blk.token = edVideo, c.VideoTokenID
		}
		if err != nil {
			return nil, 0, err
		}
		if err := w.text(st, blk.start); err != nil {
			return nil, 0, err
		}
		if err := c.checkBlock(tokens, blk); err != nil {
			return nil, 0, err
		}
		if err := w.vision(blk, c.SpatialMergeSize); err != nil {
			return nil, 0, err
		}
		st = blk.start + blk.tokens(c.SpatialMergeSize)
	}
	if err := w.text(st, n); err != nil {
		return nil, 0, err
	}
	return w.pos, w.largest, nil
}

// checkBlock verifies that the block's tokens are all its vision token and
// that no further one follows (transformers would number a missing token's
// place from the next text and give surplus ones text ids).
func (c Config) checkBlock(tokens []int32, blk block) error {
	need := blk.tokens(c.SpatialMergeSize)
	end := blk.start + need
	if end > len(tokens) {
		return invalid("%s needs %d tokens from token %d, the row has %d", blk.name, need, blk.start, len(tokens)-blk.start)
	}
	for i := blk.start; i < end; i++ {
		if tokens[i] != blk.token {
			return invalid("%s needs %d tokens from token %d, token %d is %d", blk.name, need, blk.start, i, tokens[i])
		}
	}
	if end < len(tokens) && tokens[end] == blk.token {
		return invalid("%s needs %d tokens from token %d, the row has more", blk.name, need, blk.start)
	}
	return nil
}

func indexFrom(tokens []int32, id int32, from int) int {
	for i := from; i < len(tokens); i++ {
		if tokens[i] == id {
			return i
		}
	}
	return -1
}

// rowWriter numbers one row: next is the id the next text token gets (one
// past the largest id so far).
type rowWriter struct {
	pos     []int32
	next    int64
	largest int64
}

func (w *rowWriter) put(tok int, t, h, v int64) error {
	if max(t, h, v) > math.MaxInt32 {
		return overflow("token %d would have id %d, beyond int32", tok, max(t, h, v))
	}
	w.pos[3*tok], w.pos[3*tok+1], w.pos[3*tok+2] = int32(t), int32(h), int32(v)
	w.largest = max(w.largest, t, h, v)
	return nil
}

// text numbers tokens [from, to) as text.
func (w *rowWriter) text(from, to int) error {
	for i := from; i < to; i++ {
		p := w.next + int64(i-from)
		if err := w.put(i, p, p, p); err != nil {
			return err
		}
	}
	if to > from {
		w.next += int64(to - from)
	}
	return nil
}

// vision numbers a block frame by frame, merged row by merged row, from the
// id the next text token would have had; the text after it resumes one past
// its largest id.
func (w *rowWriter) vision(blk block, merge int) error {
	base := w.next
	rows, cols := blk.grid.H/merge, blk.grid.W/merge
	tok := blk.start
	top := base
	for f := 0; f < blk.grid.T; f++ {
		t := base + blk.time(f)
		for r := 0; r < rows; r++ {
			for c := 0; c < cols; c++ {
				if err := w.put(tok, t, base+int64(r), base+int64(c)); err != nil {
					return err
				}
				top = max(top, t, base+int64(r), base+int64(c))
				tok++
			}
		}
	}
	w.next = top + 1
	return nil
}
