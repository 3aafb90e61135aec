package positions

import (
	"math"
	"testing"
)

// FuzzBuilders feeds every builder inputs decoded from fuzz bytes: small
// token alphabets around the vision tokens, grids with dimensions in
// [-2, 13], masks and seconds. The builders must return ids or an error,
// never panic, and a returned Index must have the shape of its input.
func FuzzBuilders(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(0), int64(0))
	f.Add([]byte{1, 1, 2, 2, 2, 2, 3, 0, 4, 4, 4, 4, 4}, uint8(1), int64(-3))
	f.Add([]byte{9, 1, 2, 2, 2, 2, 2, 2, 3, 7, 7}, uint8(2), int64(1<<40))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8, delta int64) {
		cfg := []Config{Qwen2VL7B, Qwen25VL7B, Qwen3VL8B}[mode%3]
		cfg.TruncateSecondsPerGrid = mode&4 != 0
		alphabet := []int32{7, cfg.VisionStartTokenID, cfg.ImageTokenID, 151653, cfg.VideoTokenID}
		take := func() int {
			if len(data) == 0 {
				return 0
			}
			b := int(data[0])
			data = data[1:]
			return b
		}
		grid := func() Grid { return Grid{take()%16 - 2, take()%16 - 2, take()%16 - 2} }
		rows, length := take()%3+1, take()%40
		in := Input{}
		for range rows {
			row := make([]int32, length)
			for i := range row {
				row[i] = alphabet[take()%len(alphabet)]
			}
			in.IDs = append(in.IDs, row)
		}
		if mode&8 != 0 {
			for range rows {
				m := make([]bool, length)
				for i := range m {
					m[i] = take()%4 != 0
				}
				in.Mask = append(in.Mask, m)
			}
		}
		for range take() % 4 {
			in.Images = append(in.Images, grid())
		}
		for range take() % 3 {
			in.Videos = append(in.Videos, grid())
		}
		if mode&16 != 0 {
			for range in.Videos {
				in.SecondsPerGrid = append(in.SecondsPerGrid, float64(take())/8)
			}
		}
		if ix, err := cfg.RopeIndex(in); err == nil {
			if len(ix.Pos) != rows || len(ix.Deltas) != rows {
				t.Fatalf("%d rows in, %d and %d out", rows, len(ix.Pos), len(ix.Deltas))
			}
			for _, p := range ix.Pos {
				if len(p) != 3*length {
					t.Fatalf("row of %d tokens has %d ids", length, len(p))
				}
			}
			_, _ = ix.Decode(0, length, 2)
		}
		_, _ = Decode(delta, int(delta%math.MaxInt32), take()%5)
		var grids []Grid
		for range take() % 3 {
			grids = append(grids, grid())
		}
		_, _ = VisionPatchPositions(grids, take()%4)
		var images []PatchGrid
		for range take() % 3 {
			images = append(images, PatchGrid{take()%20 - 2, take()%20 - 2})
		}
		width := take()%20 - 2
		_, _ = PixtralPositionIDs(images, width)
		_, _ = PixtralRowCol(images, width)
	})
}
