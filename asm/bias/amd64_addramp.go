package bias

import (
	"fmt"
	"math"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/asm/amd64"
)

// addRamp emits addRamp<ISA>(dst, nslope, t0): dst[j] += float32(nslope·|t0 − j|)
// with the bias formed in float64, as the alibi wrapper's fillD forms a table
// entry: t0 − j is an exact float64 integer (|t0|, j < 2^52), the product is
// rounded to float64 and then to float32 (VCVTPD2PS, round to nearest even),
// so the result is bit for bit the table path's. A float32 vector of L lanes
// is two float64 vectors of L/2 lanes: tlo holds t0 − j for the block's first
// L/2 keys and thi for the next L/2; vector u of a block subtracts u·L from
// them (a memory constant), so the vectors of a block do not wait on each
// other, and tlo and thi move once per block.
func (g gen) addRamp() {
	c := g.Ctx
	L := g.ISA.Lanes
	H := L / 2
	g.Begin(abi.AddRamp, "addRamp"+g.ISA.Suffix+" is the "+g.ISA.Name+" kernels.addRamp: dst[j] += float32(nslope·|t0 − j|),",
		"the bias formed in float64. It trusts its arguments: |t0| and len(dst) < 2^52.")
	d, n := c.GP64(), c.GP64()
	c.Load(c.Param("dst").Base(), d)
	c.Load(c.Param("dst").Len(), n)
	nx, tx := c.XMM(), c.XMM()
	c.Load(c.Param("nslope"), nx)
	c.Load(c.Param("t0"), tx)
	ns, tlo, thi := g.Vec(), g.Vec(), g.Vec()
	c.VBROADCASTSD(nx, ns)
	c.VBROADCASTSD(tx, tlo)

	// f64 is a full-width memory vector of H copies of the float64 v.
	f64 := func(v float64) operand.Mem {
		bits := math.Float64bits(v)
		vals := make([]operand.Constant, H)
		for i := range vals {
			vals[i] = operand.U64(bits)
		}
		return g.Pool.Add(fmt.Sprintf("c64x%d_%016x", H, bits), vals)
	}
	iota := make([]operand.Constant, H)
	for i := range iota {
		iota[i] = operand.U64(math.Float64bits(float64(i)))
	}
	c.VSUBPD(g.Pool.Add(fmt.Sprintf("iota64x%d", H), iota), tlo, tlo)
	c.VSUBPD(f64(float64(H)), tlo, thi)
	absMask := func() operand.Mem {
		vals := make([]operand.Constant, H)
		for i := range vals {
			vals[i] = operand.U64(1<<63 - 1)
		}
		return g.Pool.Add(fmt.Sprintf("abs64x%d", H), vals)
	}()

	// bias writes the L float32 biases of vector u of a block into v.
	bias := func(u int, v reg.VecVirtual) {
		halves := [2]reg.VecVirtual{}
		for i, t := range []reg.VecVirtual{tlo, thi} {
			a := g.Vec()
			if u == 0 {
				c.VANDPD(absMask, t, a)
			} else {
				c.VSUBPD(f64(float64(u*L)), t, a)
				c.VANDPD(absMask, a, a)
			}
			c.VMULPD(ns, a, a)
			if L == 8 {
				x := c.XMM()
				c.VCVTPD2PSY(a, x)
				halves[i] = x
			} else {
				y := c.YMM()
				c.VCVTPD2PS(a, y)
				halves[i] = y
			}
		}
		if L == 8 {
			c.VINSERTF128(operand.U8(1), halves[1], halves[0].AsY(), v)
		} else {
			c.VINSERTF32X8(operand.U8(1), halves[1], halves[0].AsZ(), v)
		}
	}
	g.VectorLoopBlocks(n, amd64.Unroll, []reg.GPVirtual{d}, func(u, blk int) {
		v := g.Vec()
		bias(u, v)
		c.VADDPS(amd64.Mem(d, 4*L*u), v, v)
		c.VMOVUPS(v, amd64.Mem(d, 4*L*u))
		if u == blk-1 {
			step := f64(float64(blk * L))
			c.VSUBPD(step, tlo, tlo)
			c.VSUBPD(step, thi, thi)
		}
	}, func(t amd64.Tail) {
		v, w := g.Vec(), g.Vec()
		bias(0, v)
		t.Load(amd64.Mem(d, 0), w)
		c.VADDPS(w, v, v)
		t.Store(v, amd64.Mem(d, 0))
	})
	c.VZEROUPPER()
	c.RET()
}
