package cudahost

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// RelShape is one (lq, lk, qOffset) call shape of the rpe_full and xl
// launchers.
type RelShape struct{ Lq, Lk, QOffset int }

// storageRelShapes and storageRelN are VerifyStorage's rpe_full and xl
// calls: single keys, lq ≠ lk, offsets up to 2^20, empty calls, and xl
// Relative up to 3000 rows.
var (
	storageRelShapes = []RelShape{{1, 1, 0}, {5, 9, 4}, {7, 40, 100}, {3, 300, 0}, {2, 70, 1 << 20}, {0, 5, 0}, {4, 0, 2}}
	storageRelN      = []int{0, 1, 7, 3000}
)

// The rpe_full and xl bounds of verify (docs/design/, "Bounds"): a float32
// sum of n products is within γ_n·Σ|terms|, γ_n ≈ n·2^−24 (Higham,
// Accuracy and Stability of Numerical Algorithms, §3.1), with 4 extra
// roundings and a factor 4 of slack.
func relScoreTol(d int, mag float64) float64 { return 4*float64(d+4)*0x1p-24*mag + 1e-30 }
func relOutputTol(lk int, mag float64) float64 {
	return 4*float64(2*lk+4)*0x1p-24*mag + 1e-30
}

// rpeScoresMag returns Σ_x |q_x|·(|k_x| + |aK_x|)/√d per score.
func rpeScoresMag(s *spec.Spec, q, k, aK []float32, lq, lk, qOffset int) []float64 {
	d := s.HeadDim
	mag := make([]float64, lq*lk)
	for i := range lq {
		for j := range lk {
			b := verify.RPEFullRow(s, qOffset+i-j)
			var m float64
			for x := range d {
				m += math.Abs(float64(q[i*d+x])) * (math.Abs(float64(k[j*d+x])) + math.Abs(float64(aK[b*d+x])))
			}
			mag[i*lk+j] = m / math.Sqrt(float64(d))
		}
	}
	return mag
}

// rpeOutputMag returns Σ_j |w_ij|·(|v_jx| + |aV_bx|) per output element.
func rpeOutputMag(s *spec.Spec, w, v, aV []float32, lq, lk, qOffset int) []float64 {
	d := s.HeadDim
	mag := make([]float64, lq*d)
	for i := range lq {
		for j := range lk {
			b := verify.RPEFullRow(s, qOffset+i-j)
			a := math.Abs(float64(w[i*lk+j]))
			for x := range d {
				mag[i*d+x] += a * (math.Abs(float64(v[j*d+x])) + math.Abs(float64(aV[b*d+x])))
			}
		}
	}
	return mag
}

// xlScoresMag returns Σ_x (|q_x|+|u_x|)·|k_x| + (|q_x|+|v_x|)·|r_x| per
// score.
func xlScoresMag(s *spec.Spec, q, k, r, u, v []float32, lq, lk int) []float64 {
	d := s.HeadDim
	mag := make([]float64, lq*lk)
	for i := range lq {
		for j := range lk {
			row := lq - 1 - i + j
			var m float64
			for x := range d {
				qa := math.Abs(float64(q[i*d+x]))
				m += (qa+math.Abs(float64(u[x])))*math.Abs(float64(k[j*d+x])) + (qa+math.Abs(float64(v[x])))*math.Abs(float64(r[row*d+x]))
			}
			mag[i*lk+j] = m
		}
	}
	return mag
}

// randWeights returns lq rows of lk non-negative weights summing to about
// 1, rounded to the storage type.
func (l *Lib) randWeights(r *rand.Rand, lq, lk int) []float32 {
	w := make([]float32, lq*lk)
	for i := range lq {
		var sum float64
		for j := range lk {
			e := r.ExpFloat64()
			w[i*lk+j] = float32(e)
			sum += e
		}
		for j := range lk {
			w[i*lk+j] = float32(float64(w[i*lk+j]) / sum)
		}
	}
	return l.RoundTrip(w)
}

// VerifyShapes runs an rpe_full or xl spec's launchers (Scores and
// Output, or Scores) once per shape, and xl's Relative for each n, on
// random inputs rounded to the storage type, against the float64 reference
// under VerifyStorage's bounds. It reaches shapes the verify harness does
// not (thousands of keys, heads wider than the launchers' shared memory).
func (l *Lib) VerifyShapes(shapes []RelShape, relN []int) *verify.Report {
	s := l.spec
	ck := &storageCheck{rep: &verify.Report{Spec: s.Name, Target: l.target}, u: StorageUlp(s.DType) * 1.0001, abs: storageAbs(s.DType)}
	l.relShapes(ck, rand.New(rand.NewPCG(7, 11)), shapes, relN)
	return ck.rep
}

// relShapes is VerifyShapes on a given check and source of randomness.
func (l *Lib) relShapes(ck *storageCheck, r *rand.Rand, shapes []RelShape, relN []int) {
	s := l.spec
	d := s.HeadDim
	for _, sh := range shapes {
		lq, lk, qo := sh.Lq, sh.Lk, sh.QOffset
		shape := fmt.Sprintf("lq=%d lk=%d qOffset=%d", lq, lk, qo)
		switch s.Encoding {
		case spec.RPEFull:
			k := l.RPEFull()
			rows := 2*s.RMax - 1
			q, kk, aK := l.randStorage(r, lq*d), l.randStorage(r, lk*d), l.randStorage(r, rows*d)
			got := make([]float32, lq*lk)
			k.Scores(got, q, kk, aK, lq, lk, qo)
			want := verify.RPEFullScores(s, q, kk, aK, lq, lk, qo)
			mag := rpeScoresMag(s, q, kk, aK, lq, lk, qo)
			ck.check("Scores "+shape, got, want, func(i int) float64 { return relScoreTol(d, mag[i]) })

			w, v, aV := l.randWeights(r, lq, lk), l.randStorage(r, lk*d), l.randStorage(r, rows*d)
			got = make([]float32, lq*d)
			for i := range got {
				got[i] = float32(math.NaN()) // every element must be written
			}
			k.Output(got, w, v, aV, lq, lk, qo)
			want = verify.RPEFullOutput(s, w, v, aV, lq, lk, qo)
			mag = rpeOutputMag(s, w, v, aV, lq, lk, qo)
			ck.check("Output "+shape, got, want, func(i int) float64 { return relOutputTol(lk, mag[i]) })
		case spec.XL:
			k := l.XL()
			rows := 0
			if lq > 0 && lk > 0 {
				rows = lq + lk - 1
			}
			q, kk, rr := l.randStorage(r, lq*d), l.randStorage(r, lk*d), l.randStorage(r, rows*d)
			uu, vv := l.randStorage(r, d), l.randStorage(r, d)
			got := make([]float32, lq*lk)
			k.Scores(got, q, kk, rr, uu, vv, lq, lk, qo)
			want := verify.XLScores(s, q, kk, rr, uu, vv, lq, lk, qo)
			mag := xlScoresMag(s, q, kk, rr, uu, vv, lq, lk)
			ck.check("Scores "+shape, got, want, func(i int) float64 { return relScoreTol(d, mag[i]) })
		}
	}
	if s.Encoding == spec.XL {
		for _, n := range relN {
			got := make([]float32, n*d)
			l.XL().Relative(got, n)
			want := verify.XLRelative(s, n)
			ck.check(fmt.Sprintf("Relative n=%d", n), got, want, func(i int) float64 { return 2e-6 * math.Max(1, math.Abs(want[i])) })
		}
	}
}
