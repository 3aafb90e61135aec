// Package exactmath holds the generator's correctly rounded transcendental
// functions, so derived constants are the same bits on every GOARCH.
package exactmath

import (
	"math"
	"math/big"
)

// The generator's transcendental functions. math.Pow, math.Exp and math.Log
// are allowed to differ in the last bit between GOARCHes (assembly on one,
// Go with fused multiply-adds on another), and the constants they produce are
// printed into generated files — which must be byte-identical wherever
// posenc runs. These versions evaluate in 256-bit big.Float arithmetic and
// round once to float64, so the result is the correctly rounded value (ties
// aside) on every machine.

const bigPrec = 256

func newBig() *big.Float { return new(big.Float).SetPrec(bigPrec) }

// bigLn2 is ln 2 = 2·atanh(1/3).
var bigLn2 = func() *big.Float {
	third := newBig().Quo(newBig().SetInt64(1), newBig().SetInt64(3))
	return atanh2(third)
}()

// atanh2 returns 2·atanh(z) = ln((1+z)/(1−z)) = 2·Σ z^(2k+1)/(2k+1), for |z| ≤ 1/3.
func atanh2(z *big.Float) *big.Float {
	z2 := newBig().Mul(z, z)
	term := newBig().Set(z) // z^(2k+1)
	sum := newBig()
	eps := newBig().SetMantExp(newBig().SetInt64(1), -bigPrec-8)
	for k := int64(0); ; k++ {
		t := newBig().Quo(term, newBig().SetInt64(2*k+1))
		sum.Add(sum, t)
		if t.Sign() == 0 || newBig().Abs(t).Cmp(eps) < 0 {
			break
		}
		term.Mul(term, z2)
	}
	return sum.Mul(sum, newBig().SetInt64(2))
}

// bigLog returns ln x for x > 0: x = m·2^e with m in [0.5, 1), ln x = e·ln 2 + ln m,
// ln m = 2·atanh((m−1)/(m+1)).
func bigLog(x *big.Float) *big.Float {
	m := newBig()
	e := x.MantExp(m)
	one := newBig().SetInt64(1)
	z := newBig().Quo(newBig().Sub(m, one), newBig().Add(m, one))
	r := atanh2(z)
	return r.Add(r, newBig().Mul(bigLn2, newBig().SetInt64(int64(e))))
}

// bigExp returns e^t: t = k·ln 2 + r with |r| ≤ ln2/2, r halved 16 times,
// a Taylor series, then squared back and scaled by 2^k.
func bigExp(t *big.Float) *big.Float {
	q, _ := newBig().Quo(t, bigLn2).Float64()
	k := math.Round(q)
	r := newBig().Sub(t, newBig().Mul(bigLn2, newBig().SetFloat64(k)))
	const halvings = 16
	r.SetMantExp(r, -halvings)
	sum, term := newBig().SetInt64(1), newBig().SetInt64(1)
	eps := newBig().SetMantExp(newBig().SetInt64(1), -bigPrec-8)
	for n := int64(1); ; n++ {
		term.Mul(term, r)
		term.Quo(term, newBig().SetInt64(n))
		sum.Add(sum, term)
		if term.Sign() == 0 || newBig().Abs(term).Cmp(eps) < 0 {
			break
		}
	}
	for range halvings {
		sum.Mul(sum, sum)
	}
	return sum.SetMantExp(sum, int(k))
}

// Pow returns x^y for x > 0, correctly rounded, identically on every GOARCH.
func Pow(x, y float64) float64 {
	if y == 0 || x == 1 {
		return 1
	}
	if x <= 0 || math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return math.Pow(x, y) // special cases: exact by definition
	}
	l := bigLog(newBig().SetFloat64(x))
	v, _ := bigExp(l.Mul(l, newBig().SetFloat64(y))).Float64()
	return v
}

// Log returns ln x for x > 0, correctly rounded, identically on every GOARCH.
func Log(x float64) float64 {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 0) || x == 1 {
		return math.Log(x) // special cases: exact by definition
	}
	v, _ := bigLog(newBig().SetFloat64(x)).Float64()
	return v
}
