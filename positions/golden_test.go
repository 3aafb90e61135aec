package positions

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"
)

// The goldens are written by tools/golden/positions_golden.py, which runs
// transformers' own functions; see its header for the commits and configs.

type ropeVariant struct {
	Config             string     `json:"config"`
	Family             string     `json:"family"`
	Commit             string     `json:"transformers_commit"`
	Function           string     `json:"function"`
	Truncate           bool       `json:"truncate_seconds_per_grid"`
	ImageTokenID       int32      `json:"image_token_id"`
	VideoTokenID       int32      `json:"video_token_id"`
	VisionStartTokenID int32      `json:"vision_start_token_id"`
	SpatialMergeSize   int        `json:"spatial_merge_size"`
	TokensPerSecond    int        `json:"tokens_per_second"`
	Cases              []ropeGold `json:"cases"`
}

type ropeGold struct {
	Name        string      `json:"name"`
	IDs         [][]int32   `json:"input_ids"`
	Mask        [][]int     `json:"attention_mask"`
	Images      [][3]int    `json:"image_grid_thw"`
	Videos      [][3]int    `json:"video_grid_thw"`
	Seconds     []float64   `json:"second_per_grid_ts"`
	Error       string      `json:"error"`
	PositionIDs [][][]int64 `json:"position_ids"`
	RopeDeltas  []int64     `json:"rope_deltas"`
	Decode      []struct {
		CachePosition int         `json:"cache_position"`
		SeqLength     int         `json:"seq_length"`
		PositionIDs   [][][]int64 `json:"position_ids"`
	} `json:"decode"`
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func grids(g [][3]int) []Grid {
	var out []Grid
	for _, r := range g {
		out = append(out, Grid{r[0], r[1], r[2]})
	}
	return out
}

func (v ropeVariant) config(t *testing.T) Config {
	fam := map[string]Family{"qwen2_vl": Qwen2VL, "qwen2_5_vl": Qwen25VL, "qwen3_vl": Qwen3VL}[v.Family]
	if fam == 0 {
		t.Fatalf("unknown family %q", v.Family)
	}
	return Config{Family: fam, ImageTokenID: v.ImageTokenID, VideoTokenID: v.VideoTokenID,
		VisionStartTokenID: v.VisionStartTokenID, SpatialMergeSize: v.SpatialMergeSize,
		TokensPerSecond: v.TokensPerSecond, TruncateSecondsPerGrid: v.Truncate}
}

func (g ropeGold) input() Input {
	in := Input{IDs: g.IDs, Images: grids(g.Images), Videos: grids(g.Videos), SecondsPerGrid: g.Seconds}
	if g.Mask != nil {
		in.Mask = make([][]bool, len(g.Mask))
		for b, row := range g.Mask {
			for _, m := range row {
				in.Mask[b] = append(in.Mask[b], m == 1)
			}
		}
	}
	return in
}

// comparePositions checks token-major rows against transformers'
// position_ids[axis][row][token], exactly.
func comparePositions(t *testing.T, what string, rows [][]int32, want [][][]int64) {
	t.Helper()
	if len(want) != 3 || len(rows) != len(want[0]) {
		t.Fatalf("%s: %d rows, transformers has %d×%d", what, len(rows), len(want), len(want[0]))
	}
	for a := range 3 {
		for b, row := range rows {
			if len(row) != 3*len(want[a][b]) {
				t.Fatalf("%s: row %d has %d tokens, transformers %d", what, b, len(row)/3, len(want[a][b]))
			}
			for tok, w := range want[a][b] {
				if got := int64(row[3*tok+a]); got != w {
					t.Fatalf("%s: position_ids[%d][%d][%d] = %d, transformers %d", what, a, b, tok, got, w)
				}
			}
		}
	}
}

func TestRopeIndexGolden(t *testing.T) {
	var variants []ropeVariant
	readJSON(t, "qwen_rope_index.json", &variants)
	if len(variants) != 4 {
		t.Fatalf("%d variants, want 4", len(variants))
	}
	cases, decodes, refusals := 0, 0, 0
	for _, v := range variants {
		cfg := v.config(t)
		for _, g := range v.Cases {
			what := v.Function + "@" + v.Commit[:8] + " " + g.Name
			ix, err := cfg.RopeIndex(g.input())
			if g.Error != "" {
				if err == nil {
					t.Errorf("%s: transformers raised %q, RopeIndex returned no error", what, g.Error)
				} else if !errors.Is(err, ErrInvalid) {
					t.Errorf("%s: error %v does not wrap ErrInvalid", what, err)
				}
				refusals++
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", what, err)
				continue
			}
			comparePositions(t, what, ix.Pos, g.PositionIDs)
			if !slices.Equal(ix.Deltas, g.RopeDeltas) {
				t.Errorf("%s: rope_deltas %v, transformers %v", what, ix.Deltas, g.RopeDeltas)
			}
			for _, d := range g.Decode {
				var rows [][]int32
				for b := range ix.Deltas {
					pos, err := ix.Decode(b, d.CachePosition, d.SeqLength)
					if err != nil {
						t.Fatalf("%s: decode: %v", what, err)
					}
					rows = append(rows, pos)
				}
				comparePositions(t, what+" decode", rows, d.PositionIDs)
				decodes++
			}
			cases++
		}
	}
	// Guard against a golden file that lost its cases.
	if cases < 80 || decodes < 240 || refusals < 16 {
		t.Fatalf("compared %d cases, %d decode steps, %d refusals: goldens incomplete", cases, decodes, refusals)
	}
}

func TestVisionPatchPositionsGolden(t *testing.T) {
	var variants []struct {
		Function string `json:"function"`
		Merge    int    `json:"spatial_merge_size"`
		Cases    []struct {
			Grid   [][3]int   `json:"grid_thw"`
			PosIDs [][2]int32 `json:"pos_ids"`
		} `json:"cases"`
	}
	readJSON(t, "vision_rot_pos.json", &variants)
	n := 0
	for _, v := range variants {
		for _, c := range v.Cases {
			pos, err := VisionPatchPositions(grids(c.Grid), v.Merge)
			if err != nil {
				t.Fatalf("%s %v: %v", v.Function, c.Grid, err)
			}
			if len(pos) != 2*len(c.PosIDs) {
				t.Fatalf("%s %v: %d patches, transformers %d", v.Function, c.Grid, len(pos)/2, len(c.PosIDs))
			}
			for p, want := range c.PosIDs {
				if pos[2*p] != want[0] || pos[2*p+1] != want[1] {
					t.Fatalf("%s %v: patch %d is (%d, %d), transformers (%d, %d)", v.Function, c.Grid, p, pos[2*p], pos[2*p+1], want[0], want[1])
				}
			}
			n++
		}
	}
	if n != 12 {
		t.Fatalf("compared %d grids, want 12", n)
	}
}

func TestPixtralGolden(t *testing.T) {
	var variants []struct {
		Cases []struct {
			Grids    [][2]int `json:"patch_grids"`
			MaxWidth int      `json:"max_width"`
			IDs      []int32  `json:"position_ids"`
		} `json:"cases"`
	}
	readJSON(t, "pixtral.json", &variants)
	n := 0
	for _, v := range variants {
		for _, c := range v.Cases {
			var images []PatchGrid
			for _, g := range c.Grids {
				images = append(images, PatchGrid{g[0], g[1]})
			}
			ids, err := PixtralPositionIDs(images, c.MaxWidth)
			if err != nil {
				t.Fatalf("%v: %v", c.Grids, err)
			}
			if !slices.Equal(ids, c.IDs) {
				t.Fatalf("%v: ids %v, transformers %v", c.Grids, ids, c.IDs)
			}
			rc, err := PixtralRowCol(images, c.MaxWidth)
			if err != nil {
				t.Fatalf("%v: %v", c.Grids, err)
			}
			for p, id := range c.IDs {
				// PixtralRotaryEmbedding's table row id holds freqs_h[id / side] and freqs_w[id % side].
				if rc[2*p] != id/int32(c.MaxWidth) || rc[2*p+1] != id%int32(c.MaxWidth) {
					t.Fatalf("%v: patch %d is (%d, %d), id %d", c.Grids, p, rc[2*p], rc[2*p+1], id)
				}
			}
			n++
		}
	}
	if n != 4 {
		t.Fatalf("compared %d cases, want 4", n)
	}
}
