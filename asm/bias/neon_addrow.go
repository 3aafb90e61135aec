package bias

import (
	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/arm64"
)

// addRow emits addRow(dst, src []float32): dst[j] += src[j].
// R0 dst cursor, R1 src cursor, R2 length, R3 trip counter.
func addRow(e *arm64.Emitter, name string) {
	e.Comment("func %s%s", name, abi.AddRow.Signature())
	e.Comment("dst[j] += src[j] for j < len(dst) (len(src) == len(dst)).")
	e.TextFor(name, abi.AddRow)
	e.LoadArg(arm64.R0, e.Arg(abi.AddRow, "dst_base"))
	e.LoadArg(arm64.R2, e.Arg(abi.AddRow, "dst_len"))
	e.LoadArg(arm64.R1, e.Arg(abi.AddRow, "src_base"))
	addLoops(e, func(nv int) {
		d, s := arm64.Vecs(0, nv, 1, arm64.S4), arm64.Vecs(4, nv, 1, arm64.S4)
		e.VLD1(arm64.R0, false, d...)
		e.VLD1(arm64.R1, true, s...)
		for i := range d {
			e.FADD(d[i], d[i], s[i])
		}
		e.VST1(arm64.R0, true, d...)
	}, func() {
		e.LoadS(0, arm64.R0, 0)
		e.LoadS(4, arm64.R1, 4)
		e.FADDS(0, 0, 4)
		e.StoreS(0, arm64.R0, 4)
	})
	e.RET()
	e.End()
}

// addLoops wraps forEach for element-wise kernels whose vector body is
// parameterized by the vector count.
func addLoops(e *arm64.Emitter, vec func(nv int), one func()) {
	e.ForEach("add", arm64.R2, arm64.R3, func() { vec(4) }, func() { vec(1) }, one)
}
