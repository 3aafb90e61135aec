package verify

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/posenc/posenc/spec"
)

// TestAttentionRefXLMatchesScores checks xl's attention reference against
// the score-matrix reference XLScores (which the PyTorch goldens of
// verify/testdata/golden_rel check) and a softmax written here: a causal
// call with queries at qOffset … qOffset+lq−1 and keys at 0 … lk−1 meets
// distances 0 … qOffset+lq−1, the first lk rows of Scores' r (row m for
// distance qOffset+lq−1−m), which are the attention form's rel for nRel =
// lk. A second call with fewer rows checks the clamp: every distance from
// nRel−1 on takes row 0.
func TestAttentionRefXLMatchesScores(t *testing.T) {
	s, err := spec.Parse("xlref.yaml", []byte("name: xlref\nencoding: xl\nhead_dim: 6\n"))
	if err != nil {
		t.Fatal(err)
	}
	const hd, lq, lk, heads = 6, 3, 11, 2
	qOffset := lk - lq
	r := rand.New(rand.NewPCG(7, 8))
	vec := func(n int) []float32 { // logits of order 1: every key weighs in the softmax
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	q, k, v := vec(lq*heads*hd), vec(lk*heads*hd), vec(lk*heads*hd)
	u, vb := vec(heads*hd), vec(heads*hd)
	rows := vec((lq + lk - 1) * heads * hd) // [lq+lk−1][heads][hd]
	qpos, kpos := make([]int32, lq), make([]int32, lk)
	for i := range qpos {
		qpos[i] = int32(qOffset + i)
	}
	for j := range kpos {
		kpos[j] = int32(j)
	}
	o := AttentionOptions{QHeads: heads, KVHeads: heads, Scale: 0.4, Causal: true}
	scale := float64(o.Scale)
	for _, nrel := range []int{lk, 4} {
		// Scores' r for head h: distance d is row qOffset+lq−1−d; rel row m is
		// distance nrel−1−m, so rel row m = r row qOffset+lq−nrel+m.
		base := qOffset + lq - nrel
		table := append(append(append([]float32(nil), u...), vb...), rows[base*heads*hd:(base+nrel)*heads*hd]...)
		got, _ := AttentionRef(s, hd, q, k, v, table, qpos, kpos, o, false)
		for h := range heads {
			head := func(x []float32, n int) []float32 {
				y := make([]float32, 0, n*hd)
				for t := range n {
					y = append(y, x[(t*heads+h)*hd:(t*heads+h+1)*hd]...)
				}
				return y
			}
			rh := head(rows, lq+lk-1)
			// Clamp: distances ≥ nrel−1 read the row of distance nrel−1.
			for m := range lq + lk - 1 {
				if d := qOffset + lq - 1 - m; d > nrel-1 {
					copy(rh[m*hd:(m+1)*hd], rh[(qOffset+lq-nrel)*hd:(qOffset+lq-nrel+1)*hd])
				}
			}
			sc := XLScores(s, head(q, lq), head(k, lk), rh, u[h*hd:(h+1)*hd], vb[h*hd:(h+1)*hd], lq, lk, qOffset)
			vh := head(v, lk)
			for i := range lq {
				qp := qOffset + i
				m := math.Inf(-1)
				for j := 0; j <= qp; j++ {
					m = math.Max(m, scale*sc[i*lk+j])
				}
				var l float64
				want := make([]float64, hd)
				for j := 0; j <= qp; j++ {
					w := math.Exp(scale*sc[i*lk+j] - m)
					l += w
					for d := range hd {
						want[d] += w * float64(vh[j*hd+d])
					}
				}
				for d := range hd {
					g := got[(i*heads+h)*hd+d]
					if math.Abs(g-want[d]/l) > 1e-12*(1+math.Abs(g)) {
						t.Fatalf("nRel %d head %d query %d dim %d: AttentionRef %v, softmax of XLScores %v", nrel, h, i, d, g, want[d]/l)
					}
				}
			}
		}
	}
}
