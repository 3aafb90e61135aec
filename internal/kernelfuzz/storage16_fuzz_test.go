package kernelfuzz

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/posenc/posenc/internal/goldens/gmrope_qwen25_bf16"
	"github.com/posenc/posenc/internal/goldens/gmrope_qwen3_f16"
	"github.com/posenc/posenc/internal/goldens/grope_llama4_bf16"
	"github.com/posenc/posenc/internal/goldens/grope_temp_f16"
	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// storage16Pkg adapts a generated rope package with f16 or bf16 storage
// whose spec has mrope_section (applyMRoPE, inverseMRoPE) or
// attn_temperature (scaleQ).
type storage16Pkg struct {
	name                     string
	applyMRoPE, inverseMRoPE func(x []uint16, pos []int32, heads int)
	scaleQ                   func(q []uint16, pos []int32, heads int)
	reg                      registry
}

// storage16Pkgs are the 16-bit M-RoPE and ScaleQ packages of
// internal/goldens (specs in verify/testdata/golden/specs).
var storage16Pkgs = []storage16Pkg{
	{name: "gmrope_qwen25_bf16", applyMRoPE: gmrope_qwen25_bf16.ApplyMRoPE, inverseMRoPE: gmrope_qwen25_bf16.InverseMRoPE,
		reg: registry{gmrope_qwen25_bf16.Variants, gmrope_qwen25_bf16.VariantAvailable, gmrope_qwen25_bf16.UseVariant, gmrope_qwen25_bf16.ActiveVariant}},
	{name: "gmrope_qwen3_f16", applyMRoPE: gmrope_qwen3_f16.ApplyMRoPE, inverseMRoPE: gmrope_qwen3_f16.InverseMRoPE,
		reg: registry{gmrope_qwen3_f16.Variants, gmrope_qwen3_f16.VariantAvailable, gmrope_qwen3_f16.UseVariant, gmrope_qwen3_f16.ActiveVariant}},
	{name: "grope_llama4_bf16", scaleQ: grope_llama4_bf16.ScaleQ,
		reg: registry{grope_llama4_bf16.Variants, grope_llama4_bf16.VariantAvailable, grope_llama4_bf16.UseVariant, grope_llama4_bf16.ActiveVariant}},
	{name: "grope_temp_f16", scaleQ: grope_temp_f16.ScaleQ,
		reg: registry{grope_temp_f16.Variants, grope_temp_f16.VariantAvailable, grope_temp_f16.UseVariant, grope_temp_f16.ActiveVariant}},
}

// specOf loads the golden-directory spec of storage16Pkgs[i].
func specOf(t testing.TB, i int) *spec.Spec {
	t.Helper()
	s, err := spec.Load(filepath.Join("..", "..", "verify", "testdata", "golden", "specs", storage16Pkgs[i].name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// FuzzStorage16 runs ApplyMRoPE and InverseMRoPE, or ScaleQ, of every
// runnable variant of the 16-bit packages above on fuzzed shapes (0…4097
// tokens, 1…67 heads), positions over the whole int32 range (each axis of
// an M-RoPE token drawn on its own) and inputs that are arbitrary finite
// encodings of the storage type (subnormals and ±0 included), against the
// float64 references verify.MRoPEApply and verify.TemperatureApply rounded
// to the storage type: |y − round(ref)| ≤ ulp/2 + ulp′/2 + b as verify's
// 16-bit harness bounds it (b the float32 bound: tol·(|x0|+|x1|)·A for a
// rotated pair, tol = 1e-5 at any position; 3·2^−24·|ref| for ScaleQ).
// Dims ≥ RotaryDim keep their bits.
func FuzzStorage16(f *testing.F) {
	f.Add(uint8(0), uint16(3), uint8(2), int32(0), int32(1), uint8(0), uint64(1))
	f.Add(uint8(1), uint16(17), uint8(5), int32(-7), int32(1000), uint8(3), uint64(2))
	f.Add(uint8(2), uint16(5), uint8(7), int32(math.MaxInt32), int32(-1), uint8(1), uint64(3))
	f.Add(uint8(3), uint16(0xFFFF), uint8(66), int32(8190), int32(3), uint8(4), uint64(4))
	specs := make([]*spec.Spec, len(storage16Pkgs))
	for i := range storage16Pkgs {
		specs[i] = specOf(f, i)
	}
	f.Fuzz(func(t *testing.T, pkg uint8, tokens uint16, heads uint8, start, stride int32, mode uint8, seed uint64) {
		p, s := storage16Pkgs[int(pkg)%len(storage16Pkgs)], specs[int(pkg)%len(storage16Pkgs)]
		st := verify.Storage(s.DType)
		r := rand.New(rand.NewPCG(seed, uint64(pkg)))
		hd := s.HeadDim
		n := count(tokens)
		h := int(heads)%67 + 1
		if n > 0 {
			h = max(1, min(h, ropeElems/(n*hd)))
		}
		axes := 1
		if s.IsMRoPE() {
			axes = verify.MRoPEAxes(s)
		}
		pos := make([]int32, 0, n*axes)
		per := make([][]int32, axes)
		for a := range axes {
			per[a] = positions(r, n, mode+uint8(a), start+int32(a), stride, s.MaxPosition)
		}
		for tk := range n {
			for a := range axes {
				pos = append(pos, per[a][tk])
			}
		}
		// Finite encodings of the storage type: exponent field not all ones.
		bits := make([]uint16, n*h*hd)
		x := make([]float32, len(bits))
		for i := range bits {
			for {
				b := uint16(r.Uint32())
				if v := st.Value(b); !math.IsInf(v, 0) && !math.IsNaN(v) {
					bits[i], x[i] = b, float32(v)
					break
				}
			}
		}
		check := func(what string, got []uint16, want []float64, b func(i int) float64) {
			for i, w := range want {
				g := st.Value(got[i])
				rw := st.Round(w)
				if math.IsInf(rw, 0) {
					if g != rw && !math.IsInf(st.Round(w*(1-1e-5)), 0) {
						t.Fatalf("%s %s: [%d] = %v, want %v", p.name, what, i, g, rw)
					}
					continue
				}
				u := st.ULP(rw)
				bound := u/2 + st.ULP(math.Abs(rw)+u+b(i))/2 + b(i)
				if !(math.Abs(g-rw) <= bound) {
					t.Fatalf("%s %s: [%d] = %v (%#04x), want %v (ref %v, input %v), bound %v", p.name, what, i, g, got[i], rw, w, x[i], bound)
				}
			}
		}
		p.reg.each(t, func(v string) {
			if p.scaleQ != nil {
				want := verify.TemperatureApply(s, x, pos, h)
				got := append([]uint16(nil), bits...)
				p.scaleQ(got, pos, h)
				check(v+" ScaleQ", got, want, func(i int) float64 { return 3 * 0x1p-24 * math.Abs(want[i]) })
				return
			}
			a := verify.RoPEAttentionFactor(s)
			pa, pb := verify.RoPEPairs(s)
			partner := make([]int, hd)
			for i := range partner {
				partner[i] = -1
			}
			for i := range pa {
				partner[pa[i]], partner[pb[i]] = pb[i], pa[i]
			}
			for _, inv := range []bool{false, true} {
				want := verify.MRoPEApply(s, x, pos, h, inv)
				got := append([]uint16(nil), bits...)
				what := v + " ApplyMRoPE"
				if inv {
					what = v + " InverseMRoPE"
					p.inverseMRoPE(got, pos, h)
				} else {
					p.applyMRoPE(got, pos, h)
				}
				for i := range got {
					if d := i % hd; partner[d] < 0 && got[i] != bits[i] {
						t.Fatalf("%s %s: [%d] past RotaryDim changed: %#04x → %#04x", p.name, what, i, bits[i], got[i])
					}
				}
				check(what, got, want, func(i int) float64 {
					d := i % hd
					if partner[d] < 0 {
						return 0
					}
					return 1e-5 * (math.Abs(float64(x[i])) + math.Abs(float64(x[i-d+partner[d]]))) * a
				})
			}
		})
	})
}
