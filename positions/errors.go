package positions

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every error about malformed input: a grid
// dimension ≤ 0, a height or width the merge size does not divide, vision
// tokens that do not match the grids, a mask or batch of the wrong shape.
var ErrInvalid = errors.New("positions: invalid input")

// ErrOverflow is wrapped by the errors of inputs whose ids, or whose number
// of patches, do not fit: an id beyond the int32 range, or more than
// MaxTokens tokens or patches.
var ErrOverflow = errors.New("positions: out of range")

// MaxTokens bounds the tokens of one row, the patches of one call and the
// frames of one video: larger inputs are refused rather than allocated.
// Qwen2.5-VL's largest image, max_pixels 12845056 at patch 14, has 65536
// patches; a million-token context is well inside.
const MaxTokens = 1 << 26

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

func overflow(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrOverflow}, args...)...)
}
