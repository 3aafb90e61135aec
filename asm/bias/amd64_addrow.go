package bias

import (
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
)

// addRow emits addRow<ISA>(dst, src): dst[j] += src[j] for j < len(dst).
func (g gen) addRow() {
	c := g.Ctx
	g.Begin(abi.AddRow, "addRow"+g.ISA.Suffix+" is the "+g.ISA.Name+" kernels.addRow: dst[j] += src[j].",
		"It trusts its arguments: len(src) == len(dst).")
	d, s, n := c.GP64(), c.GP64(), c.GP64()
	c.Load(c.Param("dst").Base(), d)
	c.Load(c.Param("src").Base(), s)
	c.Load(c.Param("dst").Len(), n)

	L := g.ISA.Lanes
	g.VectorLoop(n, amd64.Unroll, []reg.GPVirtual{d, s}, func(u int) {
		v := g.Vec()
		c.VMOVUPS(amd64.Mem(d, 4*L*u), v)
		c.VADDPS(amd64.Mem(s, 4*L*u), v, v)
		c.VMOVUPS(v, amd64.Mem(d, 4*L*u))
	}, func(t amd64.Tail) {
		v, w := g.Vec(), g.Vec()
		t.Load(amd64.Mem(d, 0), v)
		t.Load(amd64.Mem(s, 0), w)
		c.VADDPS(w, v, v)
		t.Store(v, amd64.Mem(d, 0))
	})
	c.VZEROUPPER()
	c.RET()
}
