package bias

import (
	"github.com/posenc/posenc/gen/attention"
	"github.com/posenc/posenc/internal/emit"
)

// attentionFiles emits <name>_attention.go and its benchmarks when the spec gives head_dim: the
// shared engine with the ALiBi or learned-bucket bias as its term.
func attentionFiles(c *Consts) ([]emit.File, error) { return attention.Files(c.Spec, attentionTerm(c)) }

// attentionTerm is the bias family's term: ALiBi's slopes or the learned
// bucket table.
func attentionTerm(c *Consts) attention.Term {
	s := c.Spec
	t := attention.Term{
		Family:  "alibi",
		What:    "ALiBi bias",
		HeadDim: s.HeadDim,
		Doc: []string{
			"bias_h(p, q) = −Slopes()[h]·|p − q| (Press et al. 2022), formed per key inside the",
			"loop from the slopes; QHeads is Heads.",
		},
	}
	if isRPE(s) {
		t = attention.Term{
			Family:  "rpe_bias",
			What:    "learned bucket bias",
			HeadDim: s.HeadDim,
			Doc: []string{
				"bias_h(p, q) = table[h·Buckets + Bucket(p − q)], the learned [Heads][Buckets]",
				"table (T5's buckets or the clamp rule) looked up per key inside the loop; QHeads",
				"is Heads.",
			},
		}
	}
	return t
}
