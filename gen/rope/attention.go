package rope

import (
	asmattn "github.com/posenc/posenc/asm/attention"
	"github.com/posenc/posenc/gen/attention"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// fusedRope reports whether the attention form's decode blocks rotate keys
// inside the score kernel (abi.ScoresKVRope, asm/attention.AMD64Rope): the
// half layout, frequencies fixed for the package (no runtime switch, so one
// table), RotaryDim/2 a multiple of 16; over 16-bit storage the kernel is
// abi.ScoresKVRope16.
func (c *Consts) fusedRope() bool {
	return c.MRoPE == nil && c.Spec.Layout != spec.LayoutInterleaved && !c.RuntimeSwitch() && asmattn.FusedRope(c.Spec.RotaryDim)
}

// attentionFiles emits <name>_attention.go and its benchmarks: the shared engine with RoPE's
// term.
func attentionFiles(c *Consts) ([]emit.File, error) { return attention.Files(c.Spec, attentionTerm(c)) }

// attentionTerm is RoPE's term: q and k rotated inside by the package's own
// rotation (rotateTokensAt).
func attentionTerm(c *Consts) attention.Term {
	t := attention.Term{
		Family:        "rope",
		What:          "rotation",
		RuntimeSwitch: c.RuntimeSwitch(),
		FusedRope:     c.fusedRope(),
		Storage16:     c.storage16(),
		MRoPE:         c.MRoPE != nil,
		Doc: []string{
			"q and k are the unrotated projections (an unrotated KV cache, as FlashInfer's",
			"pos_encoding_mode keeps): each query is rotated at qpos and each tile of keys at",
			"kpos inside, by Apply's rotation (its table, AttentionFactor, partial rotary and",
			"exact angles beyond the table) with the frequencies of max(qpos, kpos)+1, so the",
			"result is plain attention over Apply'd q and k; the inputs are not modified.",
		},
	}
	if c.MRoPE != nil {
		t.Doc = []string{
			"q and k are the unrotated projections, rotated inside by ApplyMRoPE's rotation at",
			"their multimodal ids: qids and kids hold Axes ids per token (qids[i*Axes+a] is query",
			"i's position on axis a, as ApplyMRoPE's pos), so the result is plain attention over",
			"ApplyMRoPE'd q and k; the inputs are not modified. qpos and kpos only mask (causal,",
			"window, padding): a model masks by sequence order, which the ids do not give (an",
			"image's patches share a temporal id), so pass each token's index in the sequence.",
		}
	}
	if c.storage16() {
		t.Doc = append(t.Doc,
			"q, k, v and out hold "+c.Spec.DType+" encodings: q and k are rotated in 16 bits,",
			"rounded as Apply rounds them, and every tile is widened to float32 (exactly) for",
			"the products and the online softmax, which run in float32 as for float32 storage;",
			"out is rounded once to "+c.Spec.DType+", nearest even.")
	}
	return t
}
