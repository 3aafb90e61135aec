package kernelfuzz

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// ropeElems caps tokens·heads·HeadDim of one array so that the rare large
// inputs stay a few milliseconds per variant.
const ropeElems = 1 << 17

// positions returns n positions chosen by mode from the whole int32 range:
// an arithmetic run start + t·stride (wrapping), uniform int32, uniform in
// the table [0, maxPos), values around the boundaries (0, maxPos, 2^20,
// ±(2^31−1), −2^31), a per-token mix of those, or a constant start.
func positions(r *rand.Rand, n int, mode uint8, start, stride int32, maxPos int) []int32 {
	edges := []int32{0, 1, -1, int32(maxPos) - 1, int32(maxPos), int32(maxPos) + 1,
		1 << 20, 1<<20 + 1, -(1 << 20), math.MaxInt32, math.MaxInt32 - 1, math.MinInt32, math.MinInt32 + 1}
	pos := make([]int32, n)
	m := mode % 6
	for t := range pos {
		mt := m
		if m == 4 {
			mt = uint8(r.IntN(4))
		}
		switch mt {
		case 0:
			pos[t] = start + int32(t)*stride
		case 1:
			pos[t] = int32(r.Uint32())
		case 2:
			pos[t] = int32(r.IntN(maxPos))
		case 3:
			pos[t] = edges[r.IntN(len(edges))]
		case 5:
			pos[t] = start
		}
	}
	return pos
}

// FuzzRoPE runs Apply, Inverse, ApplyQK, ApplyTo and ApplyQKStrided (packed
// QKV rows) of every runnable variant of the
// rope packages (llama2_7b: half; gptj_6b: interleaved, rotary_dim <
// head_dim; qwen25_7b_yarn: YaRN with an attention factor) on fuzzed shapes
// (0…4097 tokens, 1…67 heads), positions over the whole int32 range and
// inputs holding ±0, subnormals, ±Inf and NaN, against verify.RoPEApply.
//
// Per rotated pair (x0, x1) of token t: when both inputs are finite (and
// A·(|x0|+|x1|) cannot overflow float32), |y − ref| ≤ tol·(|x0|+|x1|)·A +
// 4·2^−149, tol = 1e-6 for |pos[t]| ≤ 2^20 and 1e-5 beyond (docs/design; the
// 2^−149 terms allow the rounding of subnormal results, which no float32
// kernel can avoid); a NaN input makes both outputs NaN, an infinite one
// makes both non-finite. Every other pair is checked on its own, so a
// special value leaking into a neighbour fails. Dims ≥ RotaryDim keep their
// bits.
func FuzzRoPE(f *testing.F) {
	f.Add(uint8(0), uint16(3), uint8(2), uint8(1), int32(0), int32(1), uint8(0), uint64(1), []byte{})
	f.Add(uint8(1), uint16(5), uint8(3), uint8(2), int32(-7), int32(1000), uint8(0), uint64(2), []byte{0, 1, 12, 0, 9, 10})
	f.Add(uint8(2), uint16(4), uint8(1), uint8(1), int32(math.MaxInt32), int32(-1), uint8(1), uint64(3), []byte{})
	s := make([]*spec.Spec, len(ropePkgs))
	for i, p := range ropePkgs {
		s[i] = zooSpec(f, p.name)
	}
	f.Fuzz(func(t *testing.T, pkg uint8, tokens uint16, heads, kHeads uint8, start, stride int32, mode uint8, seed uint64, recipe []byte) {
		p, sp := ropePkgs[int(pkg)%len(ropePkgs)], s[int(pkg)%len(ropePkgs)]
		r := rand.New(rand.NewPCG(seed, uint64(pkg)))
		n := count(tokens)
		qh, kh := int(heads)%67+1, int(kHeads)%67+1
		if n > 0 {
			qh = max(1, min(qh, ropeElems/(n*p.headDim)))
			kh = max(1, min(kh, ropeElems/(n*p.headDim)))
		}
		pos := positions(r, n, mode, start, stride, p.maxPosition)
		x := randomValues(r, n*qh*p.headDim)
		kx := randomValues(r, n*kh*p.headDim)
		plant(x, recipe)
		plant(kx, recipe)

		wantApply := verify.RoPEApply(sp, x, pos, qh, false)
		wantInverse := verify.RoPEApply(sp, x, pos, qh, true)
		wantK := verify.RoPEApply(sp, kx, pos, kh, false)
		p.reg.each(t, func(v string) {
			y := append([]float32(nil), x...)
			p.apply(y, pos, qh)
			checkRoPE(t, sp, p, v+" Apply x", x, y, wantApply, pos, qh)

			y = append([]float32(nil), x...)
			p.inverse(y, pos, qh)
			checkRoPE(t, sp, p, v+" Inverse x", x, y, wantInverse, pos, qh)

			q, k := append([]float32(nil), x...), append([]float32(nil), kx...)
			p.applyQK(q, k, pos, qh, kh)
			checkRoPE(t, sp, p, v+" ApplyQK q", x, q, wantApply, pos, qh)
			checkRoPE(t, sp, p, v+" ApplyQK k", kx, k, wantK, pos, kh)

			// ApplyTo: the same rotation from x into a separate slice.
			y = make([]float32, len(x))
			p.applyTo(y, x, pos, qh)
			checkRoPE(t, sp, p, v+" ApplyTo dst", x, y, wantApply, pos, qh)

			// ApplyQKStrided on vLLM's packed rows [q heads | k heads | v heads],
			// padded by 0…3 floats so that rows start off vector boundaries.
			if n == 0 {
				return
			}
			hd := p.headDim
			stride := (qh+2*kh)*hd + int(seed%4)
			qkv := randomValues(r, (n-1)*stride+(qh+2*kh)*hd)
			for tk := range n {
				copy(qkv[tk*stride:], x[tk*qh*hd:(tk+1)*qh*hd])
				copy(qkv[tk*stride+qh*hd:], kx[tk*kh*hd:(tk+1)*kh*hd])
			}
			in := append([]float32(nil), qkv...)
			p.applyQKStrided(qkv, pos, qh, kh, stride)
			gq, gk := make([]float32, 0, len(x)), make([]float32, 0, len(kx))
			for tk := range n {
				gq = append(gq, qkv[tk*stride:tk*stride+qh*hd]...)
				gk = append(gk, qkv[tk*stride+qh*hd:tk*stride+(qh+kh)*hd]...)
				for i := tk*stride + (qh+kh)*hd; i < min((tk+1)*stride, len(qkv)); i++ {
					if math.Float32bits(qkv[i]) != math.Float32bits(in[i]) {
						t.Fatalf("%s %s ApplyQKStrided: token %d: float %d past the k heads changed", p.name, v, tk, i)
					}
				}
			}
			checkRoPE(t, sp, p, v+" ApplyQKStrided q", x, gq, wantApply, pos, qh)
			checkRoPE(t, sp, p, v+" ApplyQKStrided k", kx, gk, wantK, pos, kh)
		})
	})
}

// checkRoPE checks got (the kernel's output for input x) against want (the
// reference) pair by pair as FuzzRoPE describes, failing t at the first
// violation with everything needed to reproduce it.
func checkRoPE(t *testing.T, s *spec.Spec, p ropePkg, what string, x, got []float32, want []float64, pos []int32, heads int) {
	t.Helper()
	hd := s.HeadDim
	pa, pb := verify.RoPEPairs(s)
	rotated := make([]bool, hd)
	for i := range pa {
		rotated[pa[i]], rotated[pb[i]] = true, true
	}
	const slack = 4 * math.SmallestNonzeroFloat32
	for tok, pt := range pos {
		tol := 1e-6
		if pt > 1<<20 || pt < -(1<<20) {
			tol = 1e-5
		}
		for h := range heads {
			base := (tok*heads + h) * hd
			for i := range pa {
				a, b := base+pa[i], base+pb[i]
				x0, x1 := float64(x[a]), float64(x[b])
				y0, y1 := float64(got[a]), float64(got[b])
				fail := func(why string) {
					t.Fatalf("%s %s: token %d (pos %d) head %d pair %d (dims %d,%d): x = (%g, %g), got (%g, %g), want (%g, %g): %s",
						p.name, what, tok, pt, h, i, pa[i], pb[i], x0, x1, y0, y1, want[a], want[b], why)
				}
				switch {
				case math.IsNaN(x0) || math.IsNaN(x1):
					if !math.IsNaN(y0) || !math.IsNaN(y1) {
						fail("a NaN input must give NaN in both outputs of its pair")
					}
				case math.IsInf(x0, 0) || math.IsInf(x1, 0):
					if finite(y0) || finite(y1) {
						fail("an infinite input must give non-finite outputs in its pair")
					}
				default:
					mag := (math.Abs(x0) + math.Abs(x1)) * p.attention
					if mag*(1+1e-5) >= math.MaxFloat32 {
						continue // the exact result may not fit in float32
					}
					bound := tol*mag + slack
					if !(math.Abs(y0-want[a]) <= bound) || !(math.Abs(y1-want[b]) <= bound) {
						fail("error above the bound " + ftoa(bound))
					}
				}
			}
			for d := range hd {
				if !rotated[d] && math.Float32bits(got[base+d]) != math.Float32bits(x[base+d]) {
					t.Fatalf("%s %s: token %d head %d dim %d is not rotated but changed: %g → %g",
						p.name, what, tok, h, d, x[base+d], got[base+d])
				}
			}
		}
	}
}
