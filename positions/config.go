package positions

// Family selects how a Qwen vision-language model numbers its vision tokens.
type Family int

// The Qwen vision-language families of get_rope_index.
const (
	// Qwen2VL: the temporal id of a vision token is its frame index
	// (Qwen2VLModel.get_rope_index).
	Qwen2VL Family = iota + 1
	// Qwen25VL: the temporal id of a video frame i is
	// i·second_per_grid_t·tokens_per_second, of an image 0
	// (Qwen2_5_VLModel.get_rope_index).
	Qwen25VL
	// Qwen3VL: every video frame is its own vision block after a timestamp
	// in text, so each frame is a grid with t = 1 (Qwen3VLModel.get_rope_index).
	Qwen3VL
)

// String returns the family's transformers model_type.
func (f Family) String() string {
	switch f {
	case Qwen2VL:
		return "qwen2_vl"
	case Qwen25VL:
		return "qwen2_5_vl"
	case Qwen3VL:
		return "qwen3_vl"
	}
	return "unknown"
}

// Config holds what get_rope_index reads from a model's config.json.
type Config struct {
	Family Family
	// ImageTokenID, VideoTokenID and VisionStartTokenID are image_token_id,
	// video_token_id and vision_start_token_id.
	ImageTokenID, VideoTokenID, VisionStartTokenID int32
	// SpatialMergeSize is vision_config.spatial_merge_size: the LLM sees one
	// token per SpatialMergeSize×SpatialMergeSize patches.
	SpatialMergeSize int
	// TokensPerSecond is vision_config.tokens_per_second (Qwen25VL only).
	TokensPerSecond int
	// TruncateSecondsPerGrid (Qwen25VL only) truncates each
	// second_per_grid_t to an integer before multiplying, as transformers
	// does from mid-2025 (commit 00b676f8: torch.as_tensor(…, dtype=int64)),
	// so 0.5 s gives every frame temporal id 0. False follows the Qwen
	// reference code and earlier transformers (commit efa7189c): the product
	// is taken in float32 and truncated. Both agree on whole seconds.
	TruncateSecondsPerGrid bool
}

// Qwen2VL7B is Qwen/Qwen2-VL-7B-Instruct's config.json.
var Qwen2VL7B = Config{Family: Qwen2VL, ImageTokenID: 151655, VideoTokenID: 151656, VisionStartTokenID: 151652, SpatialMergeSize: 2}

// Qwen25VL7B is Qwen/Qwen2.5-VL-7B-Instruct's config.json (tokens_per_second 2).
var Qwen25VL7B = Config{Family: Qwen25VL, ImageTokenID: 151655, VideoTokenID: 151656, VisionStartTokenID: 151652, SpatialMergeSize: 2, TokensPerSecond: 2}

// Qwen3VL8B is Qwen/Qwen3-VL-8B-Instruct's config.json.
var Qwen3VL8B = Config{Family: Qwen3VL, ImageTokenID: 151655, VideoTokenID: 151656, VisionStartTokenID: 151652, SpatialMergeSize: 2}

// Grid is one row of image_grid_thw or video_grid_thw: the frames (after
// temporal patching) and the patch rows and columns of an image or video,
// before the spatial merge.
type Grid struct {
	T, H, W int
}

// Input is one batch for Config.RopeIndex.
type Input struct {
	// IDs are the token ids, one row per sequence, all rows of one length.
	IDs [][]int32
	// Mask is the attention mask (true: a real token, false: padding);
	// nil means no padding. Padded tokens get id 1 on every axis, as in
	// transformers.
	Mask [][]bool
	// Images and Videos are image_grid_thw and video_grid_thw: the grids
	// of the whole batch in token order, row after row.
	Images, Videos []Grid
	// SecondsPerGrid is second_per_grid_ts, one per video (Qwen25VL
	// only); nil means 1 s for every video.
	SecondsPerGrid []float64
}

// Index is the result of Config.RopeIndex.
type Index struct {
	// Pos holds each row's ids token-major: Pos[b][t*3+a] is axis a (0 t,
	// 1 h, 2 w) of token t, transformers' position_ids[a][b][t]. A row is
	// the pos of a generated M-RoPE package's ApplyMRoPE (Axes = 3).
	Pos [][]int32
	// Deltas are the rope_deltas (mrope_position_deltas) of the rows: the
	// largest id plus one, less the row's length with padding.
	Deltas []int64
}

// At returns transformers' position_ids[axis][row][tok].
func (ix *Index) At(axis, row, tok int) int32 { return ix.Pos[row][tok*3+axis] }
