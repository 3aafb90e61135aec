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

// xlTerm is xl's term of the attention form (gen/attention): Transformer-XL's
// relative score (Dai et al. 2019, §3.3) inside the engine's loop, q + u
// against the keys and q + v against the caller's projected rows of the
// relative encoding, read like a second key tile.
func xlTerm() attention.Term {
	return attention.Term{
		Family: "xl",
		What:   "Transformer-XL relative terms",
		Doc: []string{
			"Dai et al. (2019), §3.3, A^rel with the projections applied by the caller: the score of",
			"key j is Scale·((q + u_h)·k_j + (q + v_h)·rel_d), d = qpos[i] − kpos[j] clamped to",
			"[0, nRel−1] (a negative distance, a key after the query, takes distance 0; passing",
			"clamp_len+1 rows is Transformer-XL's clamp_len). rel is [nRel][KVHeads][HeadDim], row m",
			"the projected encoding W_k,R·R of distance nRel−1−m (the order of Transformer-XL's",
			"pos_seq, klen−1 down to 0: a contiguous causal cache reads its rows in order), any",
			"nRel ≥ 1; uBias and vBias, [QHeads][HeadDim], are the learned u and v (r_w_bias and",
			"r_r_bias), per head. The position term costs a second pass of dot products over rows",
			"of rel, as many as the keys.",
		},
	}
}

// xlAttentionFiles emits <name>_attention.go and its benchmarks for an xl
// package.
func xlAttentionFiles(c *Consts) ([]emit.File, error) {
	return attention.Files(c.Spec, xlTerm())
}
