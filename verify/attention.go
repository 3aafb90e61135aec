package verify

import (
	"math"

	"github.com/posenc/posenc/spec"
)

// The float64 reference of the fused attention form (docs/design/attention.md):
//
//	out[i][h] = Σ_j softmax_j(scale·q[i][h]·k[j][g] + bias_h(qpos[i], kpos[j]))·v[j][g],
//	g = h / (QHeads/KVHeads),
//
// over the keys not masked for query i, with the positional encoding of the
// spec inside: rope rotates q and k (RoPEApply's rotation), alibi and
// rpe_bias add their bias. The softmax is the plain float64 one (Vaswani et
// al. 2017, eq. 1; the row maximum subtracted); the fused kernels compute
// the same value with FlashAttention-2's online softmax (Dao 2023), which
// only the error bound sees.

// AttentionOptions mirror the generated packages' options of the attention
// form.
type AttentionOptions struct {
	// QHeads query heads share KVHeads key/value heads: query head h reads
	// KV head h/(QHeads/KVHeads) (grouped-query attention, Ainslie et al.
	// 2023). QHeads % KVHeads == 0.
	QHeads, KVHeads int
	// Scale multiplies q·k (usually 1/√HeadDim).
	Scale float32
	// Causal masks the keys after the query: kpos[j] > qpos[i].
	Causal bool
	// Window > 0 masks the keys at distance ≥ Window before the query:
	// qpos[i] − kpos[j] ≥ Window (sliding-window attention).
	Window int
}

// u32 is u, the unit roundoff of float32: 2^−24.
const u32 = 0x1p-24

// gamma is Higham's γ_n = n·u/(1 − n·u) for float32 (Accuracy and Stability
// of Numerical Algorithms, 2nd ed., §3.1): n roundings in a row multiply a
// value by at most 1 + γ_n.
func gamma(n int) float64 {
	nu := float64(n) * u32
	return nu / (1 - nu)
}

// attnMasked reports whether a key at position kp is masked for a query at
// qp: padding (kp < 0), after the query when causal, at distance ≥ Window
// when Window > 0 (differences in int64, so no position overflows).
func attnMasked(qp, kp int32, o AttentionOptions) bool {
	if kp < 0 {
		return true
	}
	d := int64(qp) - int64(kp)
	return (o.Causal && d < 0) || (o.Window > 0 && d >= int64(o.Window))
}

// attentionSeqLen is the seq_len whose frequencies a rope attention call
// uses for q and k alike: max over the non-negative positions of qpos and
// kpos, plus 1; 0 when there is none (the dynamic and longrope switches of
// RoPEFrequencies then stay off).
func attentionSeqLen(qpos, kpos []int32) int {
	m := -1
	for _, ps := range [][]int32{qpos, kpos} {
		for _, p := range ps {
			if p >= 0 {
				m = max(m, int(p))
			}
		}
	}
	return m + 1
}

// ropeRotateAt is RoPEApply (forward) with the frequencies of
// RoPEFrequencies(s, seqLen) instead of those of the call's own positions:
// y_a = A·(x_a·cos θ − x_b·sin θ), y_b = A·(x_b·cos θ + x_a·sin θ) with
// θ = pos·ω_i in float64.
func ropeRotateAt(s *spec.Spec, x []float32, pos []int32, heads, seqLen int) []float64 {
	hd := s.HeadDim
	w := RoPEFrequencies(s, seqLen)
	attn := RoPEAttentionFactor(s)
	pa, pb := RoPEPairs(s)
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	for t, p := range pos {
		for i, omega := range w {
			sn, cs := math.Sincos(float64(p) * omega)
			cs, sn = attn*cs, attn*sn
			for h := range heads {
				row := y[(t*heads+h)*hd : (t*heads+h+1)*hd]
				x0, x1 := row[pa[i]], row[pb[i]]
				row[pa[i]] = x0*cs - x1*sn
				row[pb[i]] = x1*cs + x0*sn
			}
		}
	}
	return y
}

// ropeElemErr returns, per element of x ([token][heads][HeadDim]), the bound
// the rope harness allows a rotated element: RoPEBound(pos)·A·(|x_a|+|x_b|)
// for both elements of a rotated pair (ropeerror.go), 0 for the copied dims
// ≥ RotaryDim.
func ropeElemErr(s *spec.Spec, x []float32, pos []int32, heads int) []float64 {
	hd := s.HeadDim
	a := RoPEAttentionFactor(s)
	pa, pb := RoPEPairs(s)
	e := make([]float64, len(x))
	for t, p := range pos {
		tol := RoPEBound(int64(p)) * a
		for h := range heads {
			o := (t*heads + h) * hd
			for i := range pa {
				b := tol * (math.Abs(float64(x[o+pa[i]])) + math.Abs(float64(x[o+pb[i]])))
				e[o+pa[i]], e[o+pb[i]] = b, b
			}
		}
	}
	return e
}

// roundTo models a kernel that rounds its float32 y', within e of each
// exact y, to the storage type (nothing for f32): y becomes round(y) and e
// the bound of |round(y') − round(y)|. Rounding is monotone, so round(y')
// lies between round(y − e) and round(y + e): the bound is 0 unless a
// rounding boundary falls within e of y (then the farther of those two),
// which keeps the reference as close to the kernel as the rounding allows.
// It returns e, updated in place.
func (st Storage) roundTo(y, e []float64) []float64 {
	if st == StorageF32 || st == "" {
		return e
	}
	for i, yi := range y {
		r := st.Round(yi)
		lo, hi := st.Round(yi-e[i]), st.Round(yi+e[i])
		y[i], e[i] = r, math.Max(math.Abs(lo-r), math.Abs(hi-r))
	}
	return e
}

// widen converts x to float64.
func widen(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// AttentionRef returns the float64 reference output [len(qpos)][QHeads][headDim]
// of the attention form and, per output element, the bound of
// docs/design/attention.md that a float32 kernel's output must be within:
// |got − out| ≤ bound. A query with no unmasked key has out = 0 and
// bound = 0 (the kernel must write exact zeros).
//
// q is [len(qpos)][QHeads][headDim], k and v [len(kpos)][KVHeads][headDim].
// For rope, q and k are unrotated and rotated here as by RoPEApply but with
// the frequencies of RoPEFrequencies(s, seqLen) for both, seqLen = 1 + the
// largest non-negative position of qpos and kpos; with kRotated, k is used
// as given (already rotated: the rotated-cache form). For alibi and
// rpe_bias, QHeads must be the spec's Heads and table (rpe_bias only) is
// the [Heads][NumBuckets] bias table; for rpe_full, table is aK then aV
// ([Buckets][headDim] each); for xl, u and v ([QHeads][headDim] each), then
// the relative rows rel ([nRel][KVHeads][headDim], row m for distance
// nRel−1−m). It panics on shapes that break the contract.
func AttentionRef(s *spec.Spec, headDim int, q, k, v, table []float32, qpos, kpos []int32, o AttentionOptions, kRotated bool) (out []float64, bound []float64) {
	return attentionRef(s, headDim, q, k, v, table, qpos, kpos, o, kRotated, StorageF32, mropeIDs{})
}

// AttentionRefMRoPE is AttentionRef for an M-RoPE spec: q and k (unless
// kRotated) are rotated as by MRoPEApply at their ids, MRoPEAxes(s) per
// token (qids for the queries, kids for the keys); qpos and kpos only mask.
func AttentionRefMRoPE(s *spec.Spec, headDim int, q, k, v []float32, qids, kids, qpos, kpos []int32, o AttentionOptions, kRotated bool) (out []float64, bound []float64) {
	return attentionRef(s, headDim, q, k, v, nil, qpos, kpos, o, kRotated, StorageF32, mropeIDs{qids, kids})
}

// attentionRef is AttentionRef for a kernel storing st: with f16 or bf16
// the rotated q and k (rope) and the output are rounded to st once each,
// and the bound grows by those roundings (Storage.roundErr); q, k and v
// must be values of st.
func attentionRef(s *spec.Spec, headDim int, q, k, v, table []float32, qpos, kpos []int32, o AttentionOptions, kRotated bool, st Storage, ids mropeIDs) (out []float64, bound []float64) {
	lq, lk := len(qpos), len(kpos)
	checkAttnArgs(s, headDim, q, k, v, table, lq, lk, o)
	a := newAttnCtx(s, headDim, q, k, v, table, qpos, kpos, o, kRotated, attentionSeqLen(qpos, kpos), st, ids)
	out = make([]float64, lq*o.QHeads*headDim)
	bound = make([]float64, len(out))
	for i := range lq {
		a.query(out, bound, i, qpos[i], kpos, 0, lk)
	}
	return out, bound
}

// query computes out and bound of query i (position qp) for every head over
// the keys lo…hi−1 (positions kpos[lo:hi], rows lo…hi−1 of a.kr and a.v).
//
// Per unmasked key j (docs/design/attention.md, "Bound"), with x_j the
// float64 logit, m = max_j x_j and w_j = exp(x_j − m)/Σ exp(x − m):
//
//	δ_j = γ_{hd+4}·|scale|·D_j + |scale|·R_j + 5u·(|scale·dot_j| + |b̂_j| + (m − x_j)) + 1.01·6u·(n_r + 1)
//
// bounds the log of the factor by which the kernel's unnormalized weight of
// key j differs from exp(x_j − m) (up to a factor common to all keys), where
// D_j = Σ_t (|q_t|+e_t)(|k_t|+f_t) with e, f the rope bounds of q and k,
// R_j = D_j − Σ_t |q_t||k_t| the rope error of the dot product, b̂_j the bias
// the kernel adds (b_j − max_j b_j, plus |b_j| for rpe_bias) and
// n_r = ⌈n/16⌉ the rescales of the online softmax over n keys. With
// E_j = e^{δ_j} − 1 and Ē = Σ_j w_j E_j, the weight error is
// A_d = Σ_j w_j|v_jd|(E_j + Ē)/(1 − Ē), the accumulation error
// B_d = (γ_{n+n_r+2}·S_d + γ_{n+n_r+1}·(|ref_d| + A_d))/(1 − γ_{n+n_r+1})
// with S_d = Σ_j w_j|v_jd|(1+E_j)/(1−Ē), and the bound
// (A_d + B_d)(1+3u) + 3u·|ref_d| + (n+1)·2^−124·(1 + max_j|v_jd|), capped by
// |ref_d| + 1.01·max_j|v_jd| (every float32 kernel's output is a convex
// combination of the v_jd up to 1%).
func (a *attnCtx) query(out, bound []float64, i int, qp int32, kpos []int32, lo, hi int) {
	hd, o := a.hd, a.o
	n := hi - lo
	nr := (n + 15) / 16
	gDot := gamma(hd + 4 + a.extraDot)
	eta := 1.01 * 6 * u32 * float64(nr+1)
	gAcc, gSum := gamma(n+nr+2+a.extraAcc), gamma(n+nr+1)
	scale := float64(o.Scale)
	ratio := o.QHeads / o.KVHeads
	x := make([]float64, n)      // logits, −Inf where masked
	bh := make([]float64, n)     // b_j
	dd := make([]float64, n)     // |scale·dot_j|
	errd := make([]float64, n)   // γ·|scale|·D_j + |scale|·R_j
	wE := make([]float64, n)     // w_j·E_j
	w := make([]float64, n)      // w_j
	live := make([]int, 0, n)    // the unmasked keys
	acc := make([]float64, 4*hd) // per dim: ref | Σ w|v| | Σ wE|v| | max |v|
	for h := range o.QHeads {
		g := h / ratio
		qo := (i*o.QHeads + h) * hd
		qv := a.qr[qo : qo+hd]
		var qe []float64
		if a.qe != nil {
			qe = a.qe[qo : qo+hd]
		}
		m, bmax := math.Inf(-1), math.Inf(-1)
		for j := range n {
			kp := kpos[lo+j]
			if attnMasked(qp, kp, o) {
				x[j] = math.Inf(-1)
				continue
			}
			ko := ((lo+j)*o.KVHeads + g) * hd
			kv := a.kr[ko : ko+hd]
			var ke []float64
			if a.ke != nil {
				ke = a.ke[ko : ko+hd]
			}
			dot, plain, full := 0.0, 0.0, 0.0
			da := 0.0 // rpe_full: q·aK[row], computed apart in the kernel
			switch {
			case a.xlRel != nil:
				// Dai et al. 2019, §3.3: (q+u)·k + (q+v)·rel_d, d = qp − kp clamped to
				// [0, nRel−1], rel_d row nRel−1−d.
				d := min(max(int64(qp)-int64(kp), 0), a.xlRows-1)
				ro := ((a.xlRows-1-d)*int64(o.KVHeads) + int64(g)) * int64(hd)
				rr := a.xlRel[ro : ro+int64(hd)]
				ub, vb := a.xlU[h*hd:(h+1)*hd], a.xlV[h*hd:(h+1)*hd]
				for t, qt := range qv {
					dot += (qt + ub[t]) * kv[t]
					da += (qt + vb[t]) * rr[t]
					plain += (math.Abs(qt)+math.Abs(ub[t]))*math.Abs(kv[t]) + (math.Abs(qt)+math.Abs(vb[t]))*math.Abs(rr[t])
				}
				full = plain
			case a.aK != nil:
				// Shaw et al.: q·(k + aK[row]) as two dot products and their sum.
				ar := a.aK[a.row(qp, kp)*hd : (a.row(qp, kp)+1)*hd]
				dk, pk := dotAbs(qv, kv)
				dq, pa := dotAbs(qv, ar)
				dot, da, plain = dk, dq, pk+pa
				full = plain
			case qe == nil && ke == nil:
				dot, plain = dotAbs(qv, kv)
				full = plain
			case ke == nil:
				for t, qt := range qv {
					kt := kv[t]
					dot += qt * kt
					ak := math.Abs(kt)
					plain += math.Abs(qt) * ak
					full += (math.Abs(qt) + qe[t]) * ak
				}
			default:
				for t, qt := range qv {
					kt := kv[t]
					dot += qt * kt
					aq, ak := math.Abs(qt), math.Abs(kt)
					plain += aq * ak
					full += (aq + qe[t]) * (ak + ke[t])
				}
			}
			b := 0.0
			if a.bias != nil {
				b = a.bias(h, qp, kp)
			}
			x[j] = scale*(dot+da) + b
			bh[j] = b
			dd[j] = math.Abs(scale*dot) + math.Abs(scale*da)
			errd[j] = gDot*math.Abs(scale)*full + math.Abs(scale)*(full-plain)
			m = math.Max(m, x[j])
			bmax = math.Max(bmax, b)
		}
		oo := (i*o.QHeads + h) * hd
		if math.IsInf(m, -1) { // no unmasked key: exact zeros
			clear(out[oo : oo+hd])
			clear(bound[oo : oo+hd])
			continue
		}
		l := 0.0
		for j := range n {
			w[j] = math.Exp(x[j] - m) // 0 where masked
			l += w[j]
		}
		eBar := 0.0
		for j := range n {
			if math.IsInf(x[j], -1) {
				w[j], wE[j] = 0, 0
				continue
			}
			bhat := bh[j] - bmax
			if a.rawBias {
				bhat = math.Abs(bhat) + math.Abs(bh[j])
			}
			delta := errd[j] + 5*u32*(dd[j]+math.Abs(bhat)+(m-x[j])) + eta
			// w_j·E_j = (e^{x_j−m+δ_j} − e^{x_j−m})/l, finite even where
			// e^{δ_j} alone overflows.
			wE[j] = (math.Exp(x[j]-m+delta) - math.Exp(x[j]-m)) / l
			w[j] /= l
			eBar += wE[j]
		}
		live = live[:0]
		for j := range n {
			if !math.IsInf(x[j], -1) {
				live = append(live, j)
			}
		}
		clear(acc)
		ra, sa, ea, ma := acc[:hd], acc[hd:2*hd], acc[2*hd:3*hd], acc[3*hd:]
		for _, j := range live {
			vr := a.v[((lo+j)*o.KVHeads+g)*hd : ((lo+j)*o.KVHeads+g+1)*hd]
			var av []float64 // rpe_full: the value is v_j + aV[row]
			if a.aV != nil {
				r := a.row(qp, kpos[lo+j])
				av = a.aV[r*hd : (r+1)*hd]
			}
			wj, wej := w[j], wE[j]
			ra, sa, ea, ma := ra[:len(vr)], sa[:len(vr)], ea[:len(vr)], ma[:len(vr)]
			for d, vf := range vr {
				vd := float64(vf)
				mag := math.Abs(vd)
				if av != nil {
					// The kernel sums p·v and the bucket weights' w·aV apart, so its
					// error scales with |v| + |aV|, not with |v + aV| (which may cancel).
					vd += av[d]
					mag += math.Abs(av[d])
				}
				ra[d] += wj * vd
				sa[d] += wj * mag
				ea[d] += wej * mag
				if mag > ma[d] {
					ma[d] = mag
				}
			}
		}
		for d := range hd {
			ref, sw, swe, vmax := ra[d], sa[d], ea[d], ma[d]
			out[oo+d] = ref
			capB := math.Abs(ref) + 1.01*vmax
			if eBar >= 0.5 {
				bound[oo+d] = capB
				continue
			}
			aw := (swe + sw*eBar) / (1 - eBar)
			sd := (sw + swe) / (1 - eBar)
			bacc := (gAcc*sd + gSum*(math.Abs(ref)+aw)) / (1 - gSum)
			b := (aw+bacc)*(1+3*u32) + 3*u32*math.Abs(ref) + float64(n+1)*0x1p-124*(1+vmax)
			bound[oo+d] = math.Min(b, capB)
		}
		if a.st != StorageF32 && a.st != "" {
			// The float32 result, within bound of ref, rounded once to the storage type.
			for d := range hd {
				bound[oo+d] += a.st.ULP(math.Abs(out[oo+d])+bound[oo+d]) / 2
			}
		}
	}
}

// dotAbs returns Σ a_t·b_t and Σ |a_t·b_t| (four partial sums each, for
// speed; the order does not matter at float64 precision here).
func dotAbs(a, b []float64) (dot, abs float64) {
	b = b[:len(a)]
	var d0, d1, d2, d3, s0, s1, s2, s3 float64
	t := 0
	for ; t+4 <= len(a); t += 4 {
		p0, p1, p2, p3 := a[t]*b[t], a[t+1]*b[t+1], a[t+2]*b[t+2], a[t+3]*b[t+3]
		d0, d1, d2, d3 = d0+p0, d1+p1, d2+p2, d3+p3
		s0, s1, s2, s3 = s0+math.Abs(p0), s1+math.Abs(p1), s2+math.Abs(p2), s3+math.Abs(p3)
	}
	for ; t < len(a); t++ {
		p := a[t] * b[t]
		d0 += p
		s0 += math.Abs(p)
	}
	return (d0 + d1) + (d2 + d3), (s0 + s1) + (s2 + s3)
}
