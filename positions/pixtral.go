package positions

// PatchGrid is the patch rows and columns of one Pixtral image: its height
// and width in pixels divided (rounding down) by the patch size, as
// PixtralVisionModel crops patch_embeds to size // patch_size.
type PatchGrid struct {
	Rows, Cols int
}

// PixtralPatchGrid returns the patch grid of an image of heightPx×widthPx
// pixels (after the image processor's resize) and patchSize-pixel patches.
func PixtralPatchGrid(heightPx, widthPx, patchSize int) (PatchGrid, error) {
	if patchSize < 1 || heightPx < patchSize || widthPx < patchSize {
		return PatchGrid{}, invalid("a %d×%d image has no whole %d-pixel patch", heightPx, widthPx, patchSize)
	}
	return PatchGrid{heightPx / patchSize, widthPx / patchSize}, nil
}

// PixtralPositionIDs returns Pixtral's patch ids, row·maxWidth + column for
// every patch of every image, images in turn and patches row by row
// (position_ids_in_meshgrid; maxWidth is image_size / patch_size, 64 for
// Pixtral-12B). PixtralRotaryEmbedding looks its cos/sin rows up at these ids.
// It refuses maxWidth < 1, grids with a side < 1 or > maxWidth (which
// transformers' table cannot serve: a column ≥ maxWidth aliases the next
// row), and more than MaxTokens patches.
func PixtralPositionIDs(images []PatchGrid, maxWidth int) ([]int32, error) {
	n, err := checkPixtral(images, maxWidth)
	if err != nil {
		return nil, err
	}
	ids := make([]int32, 0, n)
	for _, g := range images {
		for r := 0; r < g.Rows; r++ {
			for c := 0; c < g.Cols; c++ {
				ids = append(ids, int32(r*maxWidth+c))
			}
		}
	}
	return ids, nil
}

// PixtralRowCol returns the same patches as PixtralPositionIDs as
// token-major (row, column) pairs, id = row·maxWidth + column: the pos of
// generated/pixtral_12b_vision, whose mrope_freqs alternate gives the rows
// freqs[::2] and the columns freqs[1::2] as PixtralRotaryEmbedding's table
// does at that id:
//
//	pos, err := positions.PixtralRowCol(images, 64)
//	pixtral_12b_vision.ApplyQKMRoPE(q, k, pos, heads, heads)
func PixtralRowCol(images []PatchGrid, maxWidth int) ([]int32, error) {
	n, err := checkPixtral(images, maxWidth)
	if err != nil {
		return nil, err
	}
	pos := make([]int32, 0, 2*n)
	for _, g := range images {
		for r := 0; r < g.Rows; r++ {
			for c := 0; c < g.Cols; c++ {
				pos = append(pos, int32(r), int32(c))
			}
		}
	}
	return pos, nil
}

func checkPixtral(images []PatchGrid, maxWidth int) (int, error) {
	if maxWidth < 1 || maxWidth > 1<<15 {
		return 0, invalid("max width %d is not in [1, 32768]", maxWidth)
	}
	n := 0
	for i, g := range images {
		if g.Rows < 1 || g.Cols < 1 || g.Rows > maxWidth || g.Cols > maxWidth {
			return 0, invalid("image %d: %d×%d patches, each side must be in [1, %d]", i, g.Rows, g.Cols, maxWidth)
		}
		if n += g.Rows * g.Cols; n > MaxTokens {
			return 0, overflow("more than MaxTokens patches")
		}
	}
	return n, nil
}
