package bias

import (
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
	"github.com/posenc/posenc/asm/attention"
)

// AttentionAMD64 are the attention form's kernels for HeadDim d, which the
// rope and bias programs add: scoresKV and valuesKV (asm/attention) and
// expShift (abi.ExpShift), which lives here because it is softmaxRow's expf.
func AttentionAMD64(d int) []amd64.Kernel {
	return append(attention.AMD64(d), amd64.Kernel{ABI: abi.ExpShift, Emit: func(g *amd64.Gen) { gen{g}.expShift() }})
}

// expShift emits expShift<ISA>(row, m, sum): row[j] = exp(row[j] − m) with
// the exp of softmaxRow, vector by vector, and sum[0] = the sum of the row
// (lane sums, then the lanes added), tail lanes past len(row) cleared before
// they are added.
func (g gen) expShift() {
	c := g.Ctx
	g.Begin(abi.ExpShift, "expShift"+g.ISA.Suffix+" is the "+g.ISA.Name+" kernels.expShift: row[j] = exp(row[j] − m), sum[0] = Σ row[j].",
		"It trusts its arguments: len(sum) >= 1.")
	r, n, s := c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("row").Base(), r)
	c.Load(c.Param("row").Len(), n)
	c.Load(c.Param("sum").Base(), s)
	mx := c.XMM()
	c.Load(c.Param("m"), mx)
	m := g.Vec()
	c.VBROADCASTSS(mx, m)
	acc := g.Vec()
	c.VXORPS(acc, acc, acc)
	e := g.newExpConsts(3)
	g.VectorLoop(n, 1, []reg.GPVirtual{r}, func(int) {
		v := g.Vec()
		c.VMOVUPS(amd64.Mem(r, 0), v)
		c.VSUBPS(m, v, v)
		g.exp(v, e)
		c.VMOVUPS(v, amd64.Mem(r, 0))
		c.VADDPS(v, acc, acc)
	}, func(t amd64.Tail) {
		v := g.Vec()
		t.Load(amd64.Mem(r, 0), v)
		c.VSUBPS(m, v, v)
		g.exp(v, e)
		t.ZeroOutside(v)
		t.Store(v, amd64.Mem(r, 0))
		c.VADDPS(v, acc, acc)
	})
	c.VMOVSS(g.HSum(acc), amd64.Mem(s, 0))
	c.VZEROUPPER()
	c.RET()
}
