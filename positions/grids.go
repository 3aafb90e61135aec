package positions

import (
	"fmt"
	"math"
)

// block is one vision block of a row: its grid (a single frame for a
// Qwen3-VL video), the index of its first token and the token it repeats.
type block struct {
	grid  Grid
	start int
	token int32
	name  string
	time  func(frame int) int64
}

// tokens is the number of LLM tokens of the block, T·(H/m)·(W/m).
func (b block) tokens(merge int) int {
	return b.grid.T * (b.grid.H / merge) * (b.grid.W / merge)
}

// gridCursor hands out the batch's grids in order, across rows, as
// get_rope_index's image_index and video_index do.
type gridCursor struct {
	cfg          Config
	in           Input
	image, video int
	frame        int // the next frame of in.Videos[video] (Qwen3VL)
}

func (g *gridCursor) nextImage() (block, error) {
	if g.image == len(g.in.Images) {
		return block{}, invalid("more image blocks than the %d image grids", len(g.in.Images))
	}
	i := g.image
	g.image++
	blk := block{grid: g.in.Images[i], name: fmt.Sprintf("image %d", i), time: frameIndex}
	if g.cfg.Family == Qwen25VL {
		// get_rope_index gives an image second_per_grid_t = 0.
		blk.time = func(int) int64 { return 0 }
	}
	return blk, nil
}

func (g *gridCursor) nextVideo() (block, error) {
	if g.video == len(g.in.Videos) {
		return block{}, invalid("more video blocks than the %d video grids allow", len(g.in.Videos))
	}
	v := g.in.Videos[g.video]
	if g.cfg.Family == Qwen3VL {
		// Qwen3VLModel.get_rope_index splits each video into v.T grids
		// (1, H, W), one per timestamped frame block.
		blk := block{grid: Grid{1, v.H, v.W}, name: fmt.Sprintf("video %d frame %d", g.video, g.frame), time: frameIndex}
		if g.frame++; g.frame == v.T {
			g.video, g.frame = g.video+1, 0
		}
		return blk, nil
	}
	i := g.video
	g.video++
	blk := block{grid: v, name: fmt.Sprintf("video %d", i), time: frameIndex}
	if g.cfg.Family == Qwen25VL {
		seconds := 1.0
		if g.in.SecondsPerGrid != nil {
			seconds = g.in.SecondsPerGrid[i]
		}
		blk.time = g.cfg.videoTime(seconds)
	}
	return blk, nil
}

// done reports grids that no block used.
func (g *gridCursor) done() error {
	if g.image < len(g.in.Images) || g.video < len(g.in.Videos) {
		return invalid("the tokens use %d of %d image grids and %d of %d video grids", g.image, len(g.in.Images), g.video, len(g.in.Videos))
	}
	return nil
}

func frameIndex(f int) int64 { return int64(f) }

// tooLarge is returned for a temporal id beyond int32, which put refuses.
const tooLarge = math.MaxInt32 + 1

// videoTime is Qwen2.5-VL's temporal id of frame f of a video whose frames
// are seconds apart (Qwen2_5_VLModel.get_rope_index: time_tensor =
// expanded_range * second_per_grid_t * tokens_per_second, then .long()).
// second_per_grid_ts arrives as a float32 tensor, so seconds is first
// rounded to float32. By default the product is float32 and truncated;
// TruncateSecondsPerGrid truncates seconds first and multiplies integers.
func (c Config) videoTime(seconds float64) func(int) int64 {
	s := float32(seconds)
	tps := int64(c.TokensPerSecond)
	if c.TruncateSecondsPerGrid {
		step := int64(s) * tps // both < 2^31 (checkInput)
		return func(f int) int64 {
			if step != 0 && int64(f) > math.MaxInt32/step {
				return tooLarge
			}
			return int64(f) * step
		}
	}
	return func(f int) int64 {
		p := float32(float32(f)*s) * float32(tps)
		if p >= math.MaxInt32 {
			return tooLarge
		}
		return int64(p) // truncates toward zero, as .long()
	}
}

// checkInput validates the config and the batch and returns the row length.
func (c Config) checkInput(in Input) (int, error) {
	switch {
	case c.Family < Qwen2VL || c.Family > Qwen3VL:
		return 0, invalid("unknown family %d", c.Family)
	case c.SpatialMergeSize < 1 || c.SpatialMergeSize > 1<<10:
		return 0, invalid("spatial merge size %d is not in [1, 1024]", c.SpatialMergeSize)
	case c.ImageTokenID == c.VideoTokenID || c.ImageTokenID == c.VisionStartTokenID || c.VideoTokenID == c.VisionStartTokenID:
		return 0, invalid("the image, video and vision start token ids must differ, got %d, %d, %d", c.ImageTokenID, c.VideoTokenID, c.VisionStartTokenID)
	case c.TokensPerSecond < 0 || c.TokensPerSecond > 1<<16:
		return 0, invalid("tokens per second %d is not in [0, 65536]", c.TokensPerSecond)
	case len(in.IDs) == 0:
		return 0, invalid("no rows")
	}
	length := len(in.IDs[0])
	if length == 0 {
		return 0, invalid("empty rows")
	}
	if length > MaxTokens {
		return 0, overflow("rows of %d tokens, more than MaxTokens", length)
	}
	for b, row := range in.IDs {
		if len(row) != length {
			return 0, invalid("row %d has %d tokens, row 0 has %d", b, len(row), length)
		}
	}
	if in.Mask != nil {
		if len(in.Mask) != len(in.IDs) {
			return 0, invalid("%d mask rows for %d rows", len(in.Mask), len(in.IDs))
		}
		for b, row := range in.Mask {
			if len(row) != length {
				return 0, invalid("mask row %d has %d entries, want %d", b, len(row), length)
			}
		}
	}
	for i, g := range in.Images {
		if err := c.checkGrid(g); err != nil {
			return 0, fmt.Errorf("image grid %d: %w", i, err)
		}
	}
	for i, g := range in.Videos {
		if err := c.checkGrid(g); err != nil {
			return 0, fmt.Errorf("video grid %d: %w", i, err)
		}
	}
	if in.SecondsPerGrid != nil {
		if c.Family != Qwen25VL {
			return 0, invalid("SecondsPerGrid is Qwen2.5-VL's, the family is %v", c.Family)
		}
		if len(in.SecondsPerGrid) != len(in.Videos) {
			return 0, invalid("%d SecondsPerGrid for %d videos", len(in.SecondsPerGrid), len(in.Videos))
		}
		for i, s := range in.SecondsPerGrid {
			if !(s >= 0 && s < math.MaxInt32) {
				return 0, invalid("SecondsPerGrid[%d] = %v is not in [0, 2^31)", i, s)
			}
		}
	}
	return length, nil
}

// checkGrid refuses dimensions ≤ 0, a height or width the merge size does
// not divide, and grids of more than MaxTokens patches.
func (c Config) checkGrid(g Grid) error {
	return checkGrid(g, c.SpatialMergeSize)
}

func checkGrid(g Grid, merge int) error {
	if g.T < 1 || g.H < 1 || g.W < 1 {
		return invalid("dimensions %d×%d×%d must be positive", g.T, g.H, g.W)
	}
	if g.H%merge != 0 || g.W%merge != 0 {
		return invalid("height %d and width %d must be multiples of the merge size %d", g.H, g.W, merge)
	}
	if g.T > MaxTokens || g.H > MaxTokens || g.W > MaxTokens || g.T*g.H > MaxTokens || g.T*g.H*g.W > MaxTokens {
		return overflow("%d×%d×%d patches, more than MaxTokens", g.T, g.H, g.W)
	}
	return nil
}

func rowError(b int, err error) error { return fmt.Errorf("row %d: %w", b, err) }
