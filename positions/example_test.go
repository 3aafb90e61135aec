package positions_test

import (
	"fmt"

	"github.com/posenc/posenc/generated/qwen25_vl_7b"
	"github.com/posenc/posenc/generated/qwen25_vl_7b_vision"
	"github.com/posenc/posenc/positions"
)

// A Qwen2.5-VL prompt with one 4×4-patch image: the ids of its tokens,
// fed to the text model's generated package, then one decode step.
func Example() {
	const img, start, end = 151655, 151652, 151653
	prompt := []int32{101, 102, start, img, img, img, img, end, 103}
	cfg := positions.Qwen25VL7B
	ix, err := cfg.RopeIndex(positions.Input{
		IDs:    [][]int32{prompt},
		Images: []positions.Grid{{T: 1, H: 4, W: 4}}, // image_grid_thw
	})
	if err != nil {
		panic(err)
	}
	for a, name := range []string{"t", "h", "w"} {
		fmt.Print(name, ":")
		for tok := range prompt {
			fmt.Print(" ", ix.At(a, 0, tok))
		}
		fmt.Println()
	}
	fmt.Println("rope_deltas:", ix.Deltas[0])

	// Prefill: rotate the queries and keys of the 9 tokens by their ids.
	heads := 2
	q := make([]float32, len(prompt)*heads*qwen25_vl_7b.HeadDim)
	k := make([]float32, len(prompt)*heads*qwen25_vl_7b.HeadDim)
	qwen25_vl_7b.ApplyQKMRoPE(q, k, ix.Pos[0], heads, heads)

	// Decode: the token at cache position 9 gets 9 + rope_deltas.
	next, err := ix.Decode(0, len(prompt), 1)
	if err != nil {
		panic(err)
	}
	fmt.Println("next token:", next)

	// The vision tower sees the image's 16 patches in 2×2 merge windows.
	patches, err := positions.VisionPatchPositions([]positions.Grid{{T: 1, H: 4, W: 4}}, 2)
	if err != nil {
		panic(err)
	}
	x := make([]float32, len(patches)/2*heads*qwen25_vl_7b_vision.HeadDim)
	qwen25_vl_7b_vision.ApplyMRoPE(x, patches, heads)
	fmt.Println("first window (row, col):", patches[:8])
	// Output:
	// t: 0 1 2 3 3 3 3 5 6
	// h: 0 1 2 3 3 4 4 5 6
	// w: 0 1 2 3 4 3 4 5 6
	// rope_deltas: -2
	// next token: [7 7 7]
	// first window (row, col): [0 0 0 1 1 0 1 1]
}
