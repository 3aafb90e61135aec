package rope_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/posenc/posenc/gen"
	"github.com/posenc/posenc/generated/deepseek_v3"
	"github.com/posenc/posenc/internal/goldens/grope_il_partial"
	"github.com/posenc/posenc/internal/goldens/grope_yarn_ds"
	"github.com/posenc/posenc/spec"
)

// hfSoftmaxScale is the softmax scale of transformers' DeepseekV3Attention
// for a config file, computed here in float64 from the config's numbers:
// qk_head_dim^−0.5 · mscale², mscale = 0.1·mscale_all_dim·ln(factor) + 1.
func hfSoftmaxScale(t *testing.T, file string) (scale, mscale2 float64, qkHeadDim int) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Nope  int `json:"qk_nope_head_dim"`
		Rope  int `json:"qk_rope_head_dim"`
		Scale struct {
			Factor       float64 `json:"factor"`
			MscaleAllDim float64 `json:"mscale_all_dim"`
		} `json:"rope_scaling"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	m := 0.1*cfg.Scale.MscaleAllDim*math.Log(cfg.Scale.Factor) + 1
	qk := cfg.Nope + cfg.Rope
	return 1 / math.Sqrt(float64(qk)) * m * m, m * m, qk
}

// TestDeepSeekSoftmaxScale checks SoftmaxScale and SoftmaxScaleFactor of the
// DeepSeek V3 zoo package against DeepSeek-V3's config.json (192^−0.5 ·
// (0.1·ln 40 + 1)² ≈ 0.1352), and of a golden package with mscale_all_dim
// 0.707 (DeepSeek-V2-Lite's) against V2-Lite's config.
func TestDeepSeekSoftmaxScale(t *testing.T) {
	const tol = 4e-16 // two float64 roundings apart at most
	want, m2, qk := hfSoftmaxScale(t, "../../importer/testdata/deepseek_v3.json")
	if qk != 192 {
		t.Fatalf("qk_head_dim %d, want 192", qk)
	}
	if got := deepseek_v3.SoftmaxScale(qk); math.Abs(got-want) > tol*want {
		t.Errorf("deepseek_v3.SoftmaxScale(%d) = %.17g, want %.17g", qk, got, want)
	}
	if got := deepseek_v3.SoftmaxScaleFactor; math.Abs(got-m2) > tol*m2 || math.Abs(m2-1.8738542070926) > 1e-12 {
		t.Errorf("deepseek_v3.SoftmaxScaleFactor = %.17g, want %.17g", got, m2)
	}
	want, m2, qk = hfSoftmaxScale(t, "../../importer/testdata/deepseek_v2_lite.json")
	if got := grope_yarn_ds.SoftmaxScale(qk); math.Abs(got-want) > tol*want {
		t.Errorf("grope_yarn_ds.SoftmaxScale(%d) = %.17g, want %.17g", qk, got, want)
	}
	if got := grope_yarn_ds.SoftmaxScaleFactor; math.Abs(got-m2) > tol*m2 {
		t.Errorf("grope_yarn_ds.SoftmaxScaleFactor = %.17g, want %.17g", got, m2)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "qkHeadDim = 0") {
			t.Errorf("SoftmaxScale(0): recovered %v", r)
		}
	}()
	deepseek_v3.SoftmaxScale(0)
}

// TestSoftmaxScaleOnlyWithMscaleAllDim: the constant is generated exactly
// for yarn specs with a non-zero mscale_all_dim; Deinterleave exactly for
// the interleaved layout.
func TestSoftmaxScaleOnlyWithMscaleAllDim(t *testing.T) {
	yarn := "scaling: {type: yarn, factor: 40, original_max_position: 4096"
	for _, c := range []struct {
		src           string
		softmax, dein bool
	}{
		{"layout: interleaved\n" + yarn + ", mscale: 1, mscale_all_dim: 1}\n", true, true},
		{"layout: half\n" + yarn + ", mscale_all_dim: 0.707}\n", true, false},
		{"layout: interleaved\n" + yarn + ", mscale: 0.707}\n", false, true},
		{"layout: half\n" + yarn + "}\n", false, false},
		{"layout: interleaved\n", false, true},
	} {
		s, err := spec.Parse("t.yaml", []byte("name: t\nencoding: rope\nhead_dim: 64\nbase: 10000\nmax_position: 64\n"+c.src))
		if err != nil {
			t.Fatal(err)
		}
		files, err := gen.Generate(s)
		if err != nil {
			t.Fatal(err)
		}
		var api string
		for _, f := range files {
			if f.Name == "t.go" {
				api = string(f.Data)
			}
		}
		if got := strings.Contains(api, "const SoftmaxScaleFactor = "); got != c.softmax {
			t.Errorf("%q: SoftmaxScaleFactor generated %v, want %v", c.src, got, c.softmax)
		}
		if got := strings.Contains(api, "func Deinterleave("); got != c.dein {
			t.Errorf("%q: Deinterleave generated %v, want %v", c.src, got, c.dein)
		}
	}
}

// hfInterleave is transformers' DeepseekV3 apply_rotary_pos_emb_interleave
// on one head x (rope_interleave), in float64: x is viewed as R/2 pairs,
// transposed to (x_0, x_2, …, x_1, x_3, …), then rotated by q·cos +
// rotate_half(q)·sin with cos and sin of p·ω_i repeated over both halves and
// scaled by a (the rotary embedding's attention_scaling). Dims from R on
// pass through (the rotary sub-head is the whole of q_pe in DeepSeek).
func hfInterleave(x []float32, p int32, w []float64, a float64) []float64 {
	r := 2 * len(w)
	q := make([]float64, len(x))
	for i := range w {
		q[i], q[r/2+i] = float64(x[2*i]), float64(x[2*i+1])
	}
	for j := r; j < len(x); j++ {
		q[j] = float64(x[j])
	}
	out := append([]float64(nil), q...)
	for j := range r {
		s, c := math.Sincos(float64(p) * w[j%(r/2)])
		var rot float64 // rotate_half: (−x2, x1)
		if j < r/2 {
			rot = -q[j+r/2]
		} else {
			rot = q[j-r/2]
		}
		out[j] = a * (q[j]*c + rot*s)
	}
	return out
}

// TestDeinterleaveMatchesHF: Apply followed by Deinterleave gives, element
// for element, transformers' DeepseekV3 output order with rope_interleave
// (within float32 rounding), and Apply alone does not (it keeps the pairs
// at 2i, 2i+1). Also with partial rotary (the pass-through dims stay put).
func TestDeinterleaveMatchesHF(t *testing.T) {
	type pkg struct {
		name         string
		headDim      int
		apply        func([]float32, []int32, int)
		deinterleave func(dst, src []float32)
		freqs        []float64
		attn         float64
	}
	for _, k := range []pkg{
		{"deepseek_v3", deepseek_v3.HeadDim, deepseek_v3.Apply, deepseek_v3.Deinterleave, deepseek_v3.Frequencies(), deepseek_v3.AttentionFactor},
		{"grope_il_partial", grope_il_partial.HeadDim, grope_il_partial.Apply, grope_il_partial.Deinterleave, grope_il_partial.Frequencies(), grope_il_partial.AttentionFactor},
	} {
		const heads = 3
		r := rand.New(rand.NewPCG(1, 2))
		pos := []int32{0, 1, 7, 4095, 8191, 8192, 100000, 1<<31 - 1}
		x := make([]float32, len(pos)*heads*k.headDim)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		y := append([]float32(nil), x...)
		k.apply(y, pos, heads)
		got := make([]float32, len(y))
		k.deinterleave(got, y)
		var worst, worstRaw float64
		for tok, p := range pos {
			for h := range heads {
				o := (tok*heads + h) * k.headDim
				want := hfInterleave(x[o:o+k.headDim], p, k.freqs, k.attn)
				for j, wj := range want {
					worst = max(worst, math.Abs(float64(got[o+j])-wj))
					worstRaw = max(worstRaw, math.Abs(float64(y[o+j])-wj))
				}
			}
		}
		if worst > 1e-5 {
			t.Errorf("%s: Apply+Deinterleave differs from transformers' de-interleaved order by %g", k.name, worst)
		}
		if worstRaw < 0.1 {
			t.Errorf("%s: Apply alone agrees with the de-interleaved order (%g): the test would not see a wrong order", k.name, worstRaw)
		}
	}
}
