package attention

import (
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
)

// NEON returns the arm64 entries of scoresKV and valuesKV. There is no NEON
// program for them yet: the "neon" variant registers the package's portable
// Go kernels (scoresKVGeneric, valuesKVGeneric, emitted by gen/attention).
func NEON() []arm64.Kernel {
	return []arm64.Kernel{
		{ABI: abi.ScoresKV, Go: "scoresKVGeneric"},
		{ABI: abi.ValuesKV, Go: "valuesKVGeneric"},
		{ABI: abi.MaxRow, Go: "maxRowGeneric"},
	}
}
