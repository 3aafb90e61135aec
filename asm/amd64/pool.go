package amd64

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
)

// ConstPool collects the read-only data of one output file and emits it
// after the functions, in first-use order (so output is deterministic).
type ConstPool struct {
	order []string
	data  map[string][]operand.Constant
}

// newConstPool returns an empty pool.
func newConstPool() *ConstPool { return &ConstPool{data: map[string][]operand.Constant{}} }

// Add registers the constant name with the given data (the first
// registration of a name wins) and returns its address.
func (c *ConstPool) Add(name string, vals []operand.Constant) operand.Mem {
	if _, ok := c.data[name]; !ok {
		c.order = append(c.order, name)
		c.data[name] = vals
	}
	return operand.NewDataAddr(operand.NewStaticSymbol(name), 0)
}

// Scalar is a 4-byte constant (a VBROADCASTSS source), named by its bits.
func (c *ConstPool) Scalar(bits uint32) operand.Mem {
	return c.Add(fmt.Sprintf("c32_%08x", bits), []operand.Constant{operand.U32(bits)})
}

// Vec8 is a 32-byte vector of eight copies of a 4-byte constant (float32
// bits or an int32), an AVX2 memory operand.
func (c *ConstPool) Vec8(bits uint32) operand.Mem {
	vals := make([]operand.Constant, 8)
	for i := range vals {
		vals[i] = operand.U32(bits)
	}
	return c.Add(fmt.Sprintf("c32x8_%08x", bits), vals)
}

// Vec16 is a 64-byte vector of sixteen copies of a 4-byte constant, an
// AVX-512 memory operand.
func (c *ConstPool) Vec16(bits uint32) operand.Mem {
	vals := make([]operand.Constant, 16)
	for i := range vals {
		vals[i] = operand.U32(bits)
	}
	return c.Add(fmt.Sprintf("c32x16_%08x", bits), vals)
}

// TailMask8 is sixteen int32: eight −1 then eight 0. The eight words at
// byte offset 4·(8−n) are an AVX2 VMASKMOVPS mask selecting n lanes.
func (c *ConstPool) TailMask8() operand.Mem {
	vals := make([]operand.Constant, 16)
	for i := range vals {
		vals[i] = operand.U32(0)
		if i < 8 {
			vals[i] = operand.U32(0xffffffff)
		}
	}
	return c.Add("tailmask8", vals)
}

// TailMask16 is sixteen uint16 where entry n is (1<<n)−1, an AVX-512
// opmask selecting n lanes.
func (c *ConstPool) TailMask16() operand.Mem {
	vals := make([]operand.Constant, 16)
	for i := range vals {
		vals[i] = operand.U16(uint16(1)<<i - 1)
	}
	return c.Add("tailmask16", vals)
}

// emit writes every collected constant as a static RODATA|NOPTR global.
func (c *ConstPool) emit(ctx *build.Context) {
	for _, name := range c.order {
		ctx.StaticGlobal(name)
		ctx.DataAttributes(attr.RODATA | attr.NOPTR)
		for _, v := range c.data[name] {
			ctx.AppendDatum(v)
		}
	}
}
