package cudahost

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/posenc/posenc/gen"
	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// repoSpec parses the spec file at path, relative to the repository root.
func repoSpec(t *testing.T, path string) *spec.Spec {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.Parse(path, src)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAttentionStored16 runs the CUDA attention form of rope specs that
// store f16 or bf16 (half and interleaved layouts, M-RoPE), host emulated:
// verify.RunAttentionStored's cases within their bounds, and the rotation
// inside equal, bit for bit, to the rotated form over keys rotated by the
// library's own apply (which stores them in 16 bits): the form must round
// its rotated keys to the storage type as apply does.
func TestAttentionStored16(t *testing.T) {
	attentionStored16(t, rotatedMatchesApply,
		"verify/testdata/golden/specs/grope_llama31_bf16.yaml",
		"verify/testdata/golden/specs/grope_f16_il.yaml",
		"verify/testdata/golden/specs/gmrope_qwen3_f16.yaml")
}

// attentionStored16 builds the library of each spec file (16-bit storage)
// in a parallel subtest, checks its attention form with
// verify.RunAttentionStored (at least 40 cases, every one within its
// bound), then runs more (nil: nothing) on it.
func attentionStored16(t *testing.T, more func(*testing.T, *Lib), paths ...string) {
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel() // each builds and runs its own library
			if _, ok := CXX(); !ok {
				t.Skip("no C++ compiler")
			}
			s := repoSpec(t, path)
			cu := writeCU(t, s)
			if !HasAttention(s) {
				t.Fatalf("%s: no attention form", s.Name)
			}
			l, err := Build(s, cu)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			r := verify.RunAttentionStored(s, l.Attention())
			r.Target = Target + "-attention"
			verify.Emit(t, r)
			if r.Cases < 40 || r.MaxRatio > 1 {
				t.Errorf("%s: %d cases, max ratio %g", s.Name, r.Cases, r.MaxRatio)
			}
			if more != nil {
				more(t, l)
			}
		})
	}
}

// TestAttentionStored16Bias runs the CUDA attention form of alibi and
// rpe_bias specs that store bf16 or f16 (q, k, v, out and rpe_bias's
// table), host emulated: verify.RunAttentionStored's cases within their
// bounds, the decode kernel's among them (alibi's 128-dim heads).
func TestAttentionStored16Bias(t *testing.T) {
	attentionStored16(t, nil,
		"verify/cudahost/testdata/alibi_bf16_attn.yaml",
		"verify/cudahost/testdata/rpe_f16_attn.yaml")
}

// rotatedMatchesApply checks that l's Attention over unrotated keys equals
// its AttentionRotated over the same keys rotated by its apply, bit for
// bit (M-RoPE: at the keys' ids), for a causal prefill with GQA.
func rotatedMatchesApply(t *testing.T, l *Lib) {
	t.Helper()
	s := l.Spec()
	st := verify.Storage(s.DType)
	hd, lq, lk, qh, kvh := s.HeadDim, 5, 37, 6, 2
	r := rand.New(rand.NewPCG(7, uint64(hd)))
	randn := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(st.Round(r.NormFloat64()))
		}
		return x
	}
	q, k, v := randn(lq*qh*hd), randn(lk*kvh*hd), randn(lk*kvh*hd)
	kpos := make([]int32, lk)
	for j := range kpos {
		kpos[j] = int32(3*j + 1000)
	}
	qpos := append([]int32(nil), kpos[lk-lq:]...)
	o := verify.AttentionOptions{QHeads: qh, KVHeads: kvh, Scale: 0.125, Causal: true}
	inside, rotated := make([]float32, len(q)), make([]float32, len(q))
	kr := append([]float32(nil), k...)
	ak, rk := l.Attention(), l.RoPE()
	if axes := verify.MRoPEAxes(s); axes > 0 {
		// Ids far from the positions, the axes apart.
		ids := func(pos []int32) []int32 {
			out := make([]int32, 0, len(pos)*axes)
			for _, p := range pos {
				for a := 0; a < axes; a++ {
					out = append(out, p/7+int32(40*a))
				}
			}
			return out
		}
		qids, kids := ids(qpos), ids(kpos)
		ak.AttentionMRoPE(inside, q, k, v, qids, kids, qpos, kpos, o)
		rk.ApplyMRoPE(kr, kids, kvh)
		ak.AttentionRotatedMRoPE(rotated, q, kr, v, qids, qpos, kpos, o)
	} else {
		ak.Attention(inside, q, k, v, nil, qpos, kpos, o)
		rk.Apply(kr, kpos, kvh)
		ak.AttentionRotated(rotated, q, kr, v, qpos, kpos, o)
	}
	for i := range inside {
		if math.Float32bits(inside[i]) != math.Float32bits(rotated[i]) {
			t.Fatalf("%s: out[%d] = %v rotating inside, %v over apply's keys", s.Name, i, inside[i], rotated[i])
		}
	}
}

// TestHasAttentionAgrees checks HasAttention against the generated .cu (the
// driver calls the launchers HasAttention promises): every zoo spec, the
// 16-bit test specs of every family, and a bf16 ALiBi spec with head_dim
// (16-bit bias specs have no attention launchers).
func TestHasAttentionAgrees(t *testing.T) {
	var specs []*spec.Spec
	for _, n := range spec.ZooNames() {
		s, err := spec.ZooSpec(n)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	for _, src := range []string{
		"name: alibi_bf16_hd\nencoding: alibi\nheads: 6\nhead_dim: 24\ndtype: bf16\ntargets: [go, cuda]\n",
		"name: rope_f16_hd\nencoding: rope\nhead_dim: 24\nlayout: half\nmax_position: 64\ndtype: f16\ntargets: [go, cuda]\n",
	} {
		s, err := spec.Parse("inline.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	for _, p := range []string{"rpe_f16.yaml", "xl_bf16.yaml", "temp_mrope_bf16.yaml", "rope_il_bf16.yaml"} {
		specs = append(specs, repoSpec(t, "tools/mutate/testdata/"+p))
	}
	for _, s := range specs {
		files, err := gen.Generate(s)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		cu := ""
		for _, f := range files {
			if filepath.Ext(f.Name) == ".cu" {
				cu = string(f.Data)
			}
		}
		if cu == "" {
			continue // no CUDA target
		}
		has := strings.Contains(cu, "cudaError_t posenc_"+s.Name+"_attention(")
		if has != HasAttention(s) {
			t.Errorf("%s (%s, dtype %s): the .cu has attention %v, HasAttention %v", s.Name, s.Encoding, s.DType, has, HasAttention(s))
		}
	}
}
