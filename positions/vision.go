package positions

import "fmt"

// VisionPatchPositions returns the (row, column) id of every patch the Qwen
// vision towers see, token-major (pos[2p] the row, pos[2p+1] the column of
// patch p), in the order of the patches the image processor emits: grid
// after grid, frame after frame, and within a frame merge window after
// merge window (windows row by row), each window's merge×merge patches row
// by row. That is rot_pos_emb of Qwen2VisionTransformerPretrainedModel
// (reshape (H/m, m, W/m, m), permute (0, 2, 1, 3)), of Qwen2.5-VL's copy and
// of Qwen3VLVisionModel (block rows, block columns, intra row, intra
// column); every frame repeats the ids of the first.
//
// Feed it to the vision tower's package, e.g. generated/qwen25_vl_7b_vision
// (Axes = 2: the first half of the pairs turns by the row, the second by the
// column):
//
//	pos, err := positions.VisionPatchPositions(grids, 2)
//	qwen25_vl_7b_vision.ApplyQKMRoPE(q, k, pos, heads, heads)
//
// Qwen2.5-VL's window attention reorders the patches (get_window_index);
// permute pos with the same index. It refuses merge < 1, a dimension ≤ 0,
// a height or width merge does not divide, and more than MaxTokens patches.
func VisionPatchPositions(grids []Grid, merge int) ([]int32, error) {
	if merge < 1 || merge > 1<<10 {
		return nil, invalid("merge size %d is not in [1, 1024]", merge)
	}
	total := 0
	for i, g := range grids {
		if err := checkGrid(g, merge); err != nil {
			return nil, fmt.Errorf("grid %d: %w", i, err)
		}
		if total += g.T * g.H * g.W; total > MaxTokens {
			return nil, overflow("more than MaxTokens patches")
		}
	}
	pos := make([]int32, 0, 2*total)
	for _, g := range grids {
		frame := len(pos)
		for br := 0; br < g.H/merge; br++ {
			for bc := 0; bc < g.W/merge; bc++ {
				for r := br * merge; r < (br+1)*merge; r++ {
					for c := bc * merge; c < (bc+1)*merge; c++ {
						pos = append(pos, int32(r), int32(c))
					}
				}
			}
		}
		first := pos[frame:]
		for f := 1; f < g.T; f++ {
			pos = append(pos, first...)
		}
	}
	return pos, nil
}
