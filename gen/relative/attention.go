package relative

import (
	"github.com/posenc/posenc/gen/attention"
	"github.com/posenc/posenc/internal/emit"
)

// rpeFullTerm is rpe_full's term of the attention form (gen/attention): Shaw
// et al.'s relative key and value embeddings inside the engine's loop, the
// a^K term a per-row bucket table of q·aK[b] and the a^V term the weights
// summed per bucket, Σ_b w_b·aV[b].
func rpeFullTerm() attention.Term {
	return attention.Term{
		Family: "rpe_full",
		What:   "relative key and value embeddings",
		Doc: []string{
			"Shaw et al. (2018), eq. 3–5, with aK and aV the learned [Buckets][HeadDim] tables",
			"(shared by every head): the score of key j gains Scale·q·aK[Bucket(qpos[i] − kpos[j])]",
			"and its value aV[Bucket(qpos[i] − kpos[j])]. Each query row's q·aK[b] is formed once",
			"per bucket, and its weights summed per bucket, so the cost over plain attention is",
			"O(Buckets·HeadDim) per query row, never a per-key embedding.",
		},
	}
}

// rpeFullAttentionFiles emits <name>_attention.go and its benchmarks for an
// rpe_full package.
func rpeFullAttentionFiles(c *Consts) ([]emit.File, error) {
	return attention.Files(c.Spec, rpeFullTerm())
}
