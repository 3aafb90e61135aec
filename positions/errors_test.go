package positions

import (
	"errors"
	"math"
	"testing"
)

const (
	img   = 151655
	vid   = 151656
	start = 151652
	end   = 151653
)

func imageBlock(n int) []int32 {
	out := []int32{start}
	for range n {
		out = append(out, img)
	}
	return append(out, end)
}

func TestRopeIndexRefuses(t *testing.T) {
	ok := Input{IDs: [][]int32{append([]int32{1, 2}, imageBlock(4)...)}, Images: []Grid{{1, 4, 4}}}
	if _, err := Qwen2VL7B.RopeIndex(ok); err != nil {
		t.Fatalf("valid input refused: %v", err)
	}
	with := func(f func(*Input)) Input {
		in := ok
		in.IDs = [][]int32{append([]int32(nil), ok.IDs[0]...)}
		in.Images = append([]Grid(nil), ok.Images...)
		f(&in)
		return in
	}
	cases := []struct {
		name string
		cfg  Config
		in   Input
		want error
	}{
		{"no rows", Qwen2VL7B, Input{}, ErrInvalid},
		{"empty row", Qwen2VL7B, Input{IDs: [][]int32{{}}}, ErrInvalid},
		{"ragged rows", Qwen2VL7B, Input{IDs: [][]int32{{1, 2}, {1}}}, ErrInvalid},
		{"short mask", Qwen2VL7B, Input{IDs: [][]int32{{1, 2}}, Mask: [][]bool{{true}}}, ErrInvalid},
		{"zero height", Qwen2VL7B, with(func(in *Input) { in.Images[0].H = 0 }), ErrInvalid},
		{"negative frames", Qwen2VL7B, with(func(in *Input) { in.Images[0].T = -1 }), ErrInvalid},
		{"odd width", Qwen2VL7B, with(func(in *Input) { in.Images[0].W = 3 }), ErrInvalid},
		{"huge grid", Qwen2VL7B, with(func(in *Input) { in.Images[0] = Grid{1 << 20, 1 << 20, 1 << 20} }), ErrOverflow},
		{"too few tokens", Qwen2VL7B, with(func(in *Input) { in.Images[0].H = 8 }), ErrInvalid},
		{"too many tokens", Qwen2VL7B, with(func(in *Input) { in.Images[0].H = 2 }), ErrInvalid},
		{"grid left over", Qwen2VL7B, with(func(in *Input) { in.Images = append(in.Images, Grid{1, 2, 2}) }), ErrInvalid},
		{"grid missing", Qwen2VL7B, with(func(in *Input) { in.Images = nil; in.Videos = []Grid{{1, 2, 2}} }), ErrInvalid},
		{"vision start last", Qwen2VL7B, with(func(in *Input) { in.IDs[0] = append(in.IDs[0], start) }), ErrInvalid},
		{"seconds on qwen2", Qwen2VL7B, with(func(in *Input) { in.SecondsPerGrid = []float64{} }), ErrInvalid},
		{"seconds count", Qwen25VL7B, with(func(in *Input) { in.SecondsPerGrid = []float64{1} }), ErrInvalid},
		{"bad merge", Config{Family: Qwen2VL, ImageTokenID: img, VideoTokenID: vid, VisionStartTokenID: start}, ok, ErrInvalid},
		{"same token ids", Config{Family: Qwen2VL, ImageTokenID: img, VideoTokenID: img, VisionStartTokenID: start, SpatialMergeSize: 2}, ok, ErrInvalid},
		{"no family", Config{ImageTokenID: img, VideoTokenID: vid, VisionStartTokenID: start, SpatialMergeSize: 2}, ok, ErrInvalid},
	}
	for _, c := range cases {
		ix, err := c.cfg.RopeIndex(c.in)
		if !errors.Is(err, c.want) || ix != nil {
			t.Errorf("%s: got %v, %v; want an error wrapping %v", c.name, ix, err, c.want)
		}
	}
	for _, s := range []float64{-1, math.NaN(), math.Inf(1), 1 << 31} {
		in := Input{IDs: [][]int32{{start, vid, end}}, Videos: []Grid{{1, 2, 2}}, SecondsPerGrid: []float64{s}}
		if _, err := Qwen25VL7B.RopeIndex(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("seconds %v: %v, want ErrInvalid", s, err)
		}
	}
}

// TestRopeIndexInt32 checks ids near the top of int32: a video whose
// temporal ids pass 2^31−1 is refused, the largest that fits is not.
func TestRopeIndexInt32(t *testing.T) {
	tokens := []int32{start}
	for range 3 {
		tokens = append(tokens, vid)
	}
	in := Input{IDs: [][]int32{tokens}, Videos: []Grid{{3, 2, 2}}, SecondsPerGrid: []float64{1 << 29}}
	cfg := Qwen25VL7B
	cfg.TruncateSecondsPerGrid = true
	// frame 2: 2·2^29·2 = 2^31, one past int32, after the one text token.
	if _, err := cfg.RopeIndex(in); !errors.Is(err, ErrOverflow) {
		t.Fatalf("id 2^31+1: %v, want ErrOverflow", err)
	}
	in.IDs[0] = in.IDs[0][1:] // no vision start: the tokens are text
	in.Videos, in.SecondsPerGrid = nil, nil
	if _, err := cfg.RopeIndex(in); err != nil {
		t.Fatalf("text: %v", err)
	}
	if _, err := Decode(0, math.MaxInt32, 1); err != nil {
		t.Fatalf("Decode at 2^31−1: %v", err)
	}
	for _, c := range []struct {
		delta    int64
		start, n int
	}{{1, math.MaxInt32, 1}, {0, math.MaxInt32, 2}, {math.MaxInt64, 0, 1}, {0, math.MaxInt, 1}, {0, -1, 1}, {0, 0, -1}} {
		if _, err := Decode(c.delta, c.start, c.n); err == nil {
			t.Errorf("Decode(%d, %d, %d) returned no error", c.delta, c.start, c.n)
		}
	}
	if _, err := (&Index{Deltas: []int64{0}}).Decode(1, 0, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("Decode of a missing row: %v", err)
	}
}

func TestVisionRefuses(t *testing.T) {
	for _, c := range []struct {
		grids []Grid
		merge int
	}{
		{[]Grid{{1, 4, 4}}, 0},
		{[]Grid{{0, 4, 4}}, 2},
		{[]Grid{{1, 4, 6}}, 4},
		{[]Grid{{1, -2, 4}}, 2},
		{[]Grid{{1 << 20, 1 << 10, 1 << 10}}, 2},
	} {
		if _, err := VisionPatchPositions(c.grids, c.merge); err == nil {
			t.Errorf("VisionPatchPositions(%v, %d) returned no error", c.grids, c.merge)
		}
	}
	for _, c := range []struct {
		images []PatchGrid
		width  int
	}{
		{[]PatchGrid{{1, 1}}, 0},
		{[]PatchGrid{{0, 3}}, 64},
		{[]PatchGrid{{3, 65}}, 64},
		{[]PatchGrid{{65, 3}}, 64},
	} {
		if _, err := PixtralPositionIDs(c.images, c.width); err == nil {
			t.Errorf("PixtralPositionIDs(%v, %d) returned no error", c.images, c.width)
		}
		if _, err := PixtralRowCol(c.images, c.width); err == nil {
			t.Errorf("PixtralRowCol(%v, %d) returned no error", c.images, c.width)
		}
	}
	if g, err := PixtralPatchGrid(1024, 500, 16); err != nil || g != (PatchGrid{64, 31}) {
		t.Errorf("PixtralPatchGrid(1024, 500, 16) = %v, %v; want {64 31}", g, err)
	}
	if _, err := PixtralPatchGrid(8, 500, 16); err == nil {
		t.Error("PixtralPatchGrid(8, 500, 16) returned no error")
	}
}
