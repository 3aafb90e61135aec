package attention

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
)

// maxRow emits maxRow<ISA>(row, m): m[0] = max(m[0], row...) with NaN
// propagating as in Go's max. VMAXPS returns its second source when either
// operand is NaN, so a NaN met early could be lost to a later number; the
// kernel keeps a separate unordered-compare flag (VCMPPS UNORD of each vector
// with itself, ORed) and stores NaN when it is set. The masked-off lanes of
// the tail keep the running maximum (AVX-512: merge-masked VMAXPS; AVX2:
// blended in before the maximum), so zeros never enter it.
func (g gen) maxRow() {
	c := g.Ctx
	g.Begin(abi.MaxRow, "maxRow"+g.ISA.Suffix+" is the "+g.ISA.Name+" kernels.maxRow: m[0] = max(m[0], row...), NaN if any is NaN.",
		"It trusts its arguments: len(m) >= 1.")
	r, n, mp := c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("row").Base(), r)
	c.Load(c.Param("row").Len(), n)
	c.Load(c.Param("m").Base(), mp)
	acc := g.Vec()
	c.VBROADCASTSS(amd64.Mem(mp, 0), acc)
	const unord = 3 // VCMPPS predicate UNORD_Q: either operand NaN
	if g.ISA.Lanes == 16 {
		// AVX-512 compares into opmasks (VCMPPS to a vector exists only in VEX
		// form), so the flag is an opmask.
		kn := c.K()
		c.VCMPPS(operand.U8(unord), acc, acc, kn)
		fold := func(v reg.VecVirtual) {
			k := c.K()
			c.VCMPPS(operand.U8(unord), v, v, k)
			c.KORW(k, kn, kn)
			c.VMAXPS(v, acc, acc)
		}
		g.VectorLoop(n, 2, []reg.GPVirtual{r}, func(u int) {
			v := g.Vec()
			c.VMOVUPS(amd64.Mem(r, 4*g.ISA.Lanes*u), v)
			fold(v)
		}, func(t amd64.Tail) {
			v := g.Vec()
			t.Load(amd64.Mem(r, 0), v)
			k := c.K()
			c.VCMPPS(operand.U8(unord), v, v, t.K, k)
			c.KORW(k, kn, kn)
			c.VMAXPS(v, acc, t.K, acc)
		})
		g.storeMax(acc, mp, func(done string) {
			c.KORTESTW(kn, kn)
			c.JZ(operand.LabelRef(done))
		})
		return
	}
	nan := g.Vec()
	c.VCMPPS(operand.U8(unord), acc, acc, nan)
	// A vector's lanes: flag its NaNs, then fold it into the maximum.
	fold := func(v reg.VecVirtual) {
		t := g.Vec()
		c.VCMPPS(operand.U8(unord), v, v, t)
		c.VORPS(t, nan, nan)
		c.VMAXPS(v, acc, acc)
	}
	g.VectorLoop(n, 2, []reg.GPVirtual{r}, func(u int) {
		v := g.Vec()
		c.VMOVUPS(amd64.Mem(r, 4*g.ISA.Lanes*u), v)
		fold(v)
	}, func(t amd64.Tail) {
		v := g.Vec()
		t.Load(amd64.Mem(r, 0), v)
		c.VBLENDVPS(t.YMask, v, acc, v) // lanes outside the tail: the maximum so far
		fold(v)
	})
	g.storeMax(acc, mp, func(done string) {
		c.VTESTPS(nan, nan)
		c.JZ(operand.LabelRef(done))
	})
}

// storeMax stores the largest lane of acc at m[0], or NaN when noNaN (which
// jumps to its label argument when no NaN was seen) falls through.
func (g gen) storeMax(acc reg.VecVirtual, mp reg.GPVirtual, noNaN func(done string)) {
	c := g.Ctx
	x := g.HReduce(acc, c.VMAXPS, c.VMAXSS)
	done := g.NewLabel("max_store")
	noNaN(done)
	c.VMOVSS(g.Pool.Scalar(0x7fc00000), x) // a quiet NaN
	c.Label(done)
	c.VMOVSS(x, amd64.Mem(mp, 0))
	c.VZEROUPPER()
	c.RET()
}
