package absolute

import (
	"math"
	"testing"

	"github.com/posenc/posenc/spec"
)

func TestDeriveAbsolute(t *testing.T) {
	s := &spec.Spec{File: "x.yaml", Name: "x", Encoding: spec.Binary, DModel: 64, MaxLen: 4096}
	c, err := derive(s)
	if err != nil {
		t.Fatal(err)
	}
	if c.BinBits != 13 {
		t.Errorf("binary 4096: BinBits %d, want 13", c.BinBits)
	}
	s = &spec.Spec{File: "x.yaml", Name: "x", Encoding: spec.Sinusoidal, DModel: 6, MaxLen: 16, Base: 10000}
	if c, err = derive(s); err != nil {
		t.Fatal(err)
	}
	if len(c.AbsFreqs) != 3 || c.AbsFreqs[0] != 1 || math.Abs(c.AbsFreqs[2]-math.Pow(10000, -4.0/6)) > 1e-15*math.Pow(10000, -4.0/6) {
		t.Errorf("sinusoidal freqs %v", c.AbsFreqs)
	}
	s = &spec.Spec{File: "x.yaml", Name: "x", Encoding: spec.Algebraic, DModel: 5, MaxLen: 17}
	if c, err = derive(s); err != nil {
		t.Fatal(err)
	}
	if c.AbsDivisors[0] != 1 || c.AbsDivisors[4] != 16 || c.AbsDivisors[2] != 4 {
		t.Errorf("algebraic divisors %v", c.AbsDivisors)
	}
}
