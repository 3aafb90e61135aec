package main

// cudaAttentionMutations are the suite's mutations of the CUDA attention
// form (templates/attention*.cu.tmpl): the main kernel, the decode kernel,
// the paged form, the rpe_full, xl and M-RoPE terms. allMutations runs them
// after the mutations of mutations.go.
var cudaAttentionMutations = []Mutation{
	// The CUDA attention form (templates/attention.cu.tmpl): the split's
	// combine, the online softmax, the ALiBi term and shift, the masks.
	{"cuda attn: combine without the splits' rescale", "templates/attention_launch.cu.tmpl", "",
		"(float)exp((double)ml[2 * s] - slope * (double)(ds[s] - dmin) - M)", "1.0f", "verify cuda llama2_7b", 0},
	{"cuda attn: acc not rescaled by the new maximum", "templates/attention.cu.tmpl", "",
		"float a = acc[c] * s_alpha[r];", "float a = acc[c];", "verify cuda llama2_7b", 0},
	{"cuda attn: alibi slope sign", "templates/attention_terms.cu.tmpl", "",
		"return -slopes[h] * (float)(d - shift);", "return slopes[h] * (float)(d - shift);", "verify cuda bloom_7b1", 0},
	{"cuda attn: alibi split shift left out of the combine", "templates/attention_launch.cu.tmpl", "",
		"(double)ml[2 * s] - slope * (double)(ds[s] - dmin) - M)", "(double)ml[2 * s] - M)", "verify cuda bloom_7b1", 0},
	{"cuda attn: causal mask hides the query's own position", "templates/attention.cu.tmpl", "",
		"(causal && kp > qp)", "(causal && kp >= qp)", "verify cuda t5_base", 0},
	// The CUDA attention form's decode kernel (templates/attention_decode.cu.tmpl).
	{"cuda attn decode: a key's dot product summed over half its lanes", "templates/attention_decode.cu.tmpl", "",
		"for (int o = kDecLanes / 2; o > 0; o >>= 1)", "for (int o = kDecLanes / 4; o > 0; o >>= 1)", "verify cuda llama2_7b", 0},
	{"cuda attn decode: warps merged without their maxima's weights", "templates/attention_decode.cu.tmpl", "",
		"const float f = s_wm[ww][r] == M ? 1.0f : attn_exp(s_wm[ww][r] - M);", "const float f = 1.0f;", "verify cuda bloom_7b1", 0},
	{"cuda attn decode: acc not rescaled by the new maximum", "templates/attention_decode.cu.tmpl", "",
		"float a = acc[r][t * kVec + e] * alpha;", "float a = acc[r][t * kVec + e];", "verify cuda t5_base", 0},
	{"cuda attn decode: the prefetched step dropped (a step's keys taken twice)", "templates/attention_decode.cu.tmpl", "",
		"cur = nxt;", "(void)nxt;", "verify cuda llama2_7b", 0},
	{"cuda attn decode: lane groups' sums l not merged", "templates/attention_decode.cu.tmpl", "",
		"l[r] += __shfl_xor_sync(0xffffffffu, l[r], o);", "(void)l[r];", "verify cuda t5_base", 0},
	{"cuda attn decode: alibi shift from the thread whose nearest key is farthest", "templates/attention_decode.cu.tmpl", "",
		"b = d >= 0 && (b < 0 || d < b) ? d : b;", "b = d >= 0 && (b < 0 || d > b) ? d : b;", "verify cuda bloom_7b1", 0},
	{"cuda attn decode paged: slots ignored (cache rows read as contiguous keys)", "templates/attention_decode.cu.tmpl", "",
		"kr = slots[j];", "(void)slots;", "verify cuda llama2_7b", 0},
	{"cuda attn decode: keys loaded unrotated (rope inside)", "templates/attention_decode.cu.tmpl", "",
		"e - c * kAttnTermUnits, true);", "e - c * kAttnTermUnits, false);", "verify cuda llama2_7b", 0},
	// The paged CUDA attention: keys through slots, sequence bounds.
	{"cuda attn paged: slots ignored (cache rows read as contiguous keys)", "templates/attention.cu.tmpl", "",
		"kr = slots[kr];", "(void)slots;", "cuda attention main rope", 0},
	{"cuda attn paged: a sequence sees the next one's first key", "templates/attention.cu.tmpl", "",
		"attn_range(k_start, lo, lk, &a.k0, &a.k1);", "attn_range(k_start, lo, lk, &a.k0, &a.k1), a.k1 += a.k1 < lk;", "verify cuda bloom_7b1", 0},
	{"cuda attn paged: query rows counted from 0, not from q_start", "templates/attention.cu.tmpl", "",
		"const long long i = q0 + rr / grp;", "const long long i = rr / grp;", "verify cuda t5_base", 0},
	// The rpe_full and xl terms of the CUDA attention form.
	{"cuda attn rpe_full: aV left out of the value", "templates/attention_terms.cu.tmpl", "",
		"return v + ld(a.av + attn_term_row(qp, kp) * kAttnDim + d);", "return v;", "verify cuda shaw2018_base", 0},
	{"cuda attn rpe_full: bucket distance sign (kp − qp)", "templates/attention_terms.cu.tmpl", "",
		"const long long d = qp - kp;", "const long long d = kp - qp;", "verify cuda shaw2018_base", 0},
	{"cuda attn rpe_full: q·aK left out of the rows' bucket table", "templates/attention_terms.cu.tmpl", "",
		"t.qa[kAttnQA ? e : 0] = da;", "t.qa[kAttnQA ? e : 0] = 0.0f;", "verify cuda shaw2018_base", 0},
	{"cuda attn rpe_full: every row reads row 0's bucket table", "templates/attention_terms.cu.tmpl", "",
		"t.qa[kAttnQA ? r * kAttnBuckets + b : 0]", "t.qa[kAttnQA ? b : 0]", "verify cuda shaw2018_base", 0},
	{"cuda attn: value hook reads s_kp (the next tile's step 1 rewrites it)", "templates/attention.cu.tmpl", "",
		"attn_term_value(targs, s_qp[r], s_vp[key], d,", "attn_term_value(targs, s_qp[r], s_kp[key], d,", "verify cuda shaw2018_base", 0},
	{"cuda attn xl: rel row of distance d read as row d", "templates/attention_terms.cu.tmpl", "",
		"a.rel + ((a.n_rel - 1 - d) * kvheads + g) * kAttnDim", "a.rel + (d * kvheads + g) * kAttnDim", "verify cuda transformer_xl_base", 0},
	{"cuda attn xl: u replaced by v in q + u", "templates/attention_terms.cu.tmpl", "",
		"dst[u] = x + ld(a.u + (size_t)h * kAttnDim + u);", "dst[u] = x + ld(a.v + (size_t)h * kAttnDim + u);", "verify cuda transformer_xl_base", 0},
	{"cuda attn xl: rel of the query's KV head 0", "templates/attention_terms.cu.tmpl", "",
		"((a.n_rel - 1 - d) * kvheads + g)", "((a.n_rel - 1 - d) * kvheads + 0 * g)", "verify cuda transformer_xl_base", 0},
	// M-RoPE's ids in the CUDA attention form: the pair's axis, the key
	// entry (not its slot, not its place in the tile), the query row.
	{"cuda attn mrope: every pair turns by axis 0's id", "templates/attention_terms.cu.tmpl", "",
		"t.axis[i] = pair_axis[i];", "t.axis[i] = 0 * pair_axis[i];", "verify cuda qwen3_vl_8b", 0},
	{"cuda attn mrope paged: kids indexed by slot, not by key entry", "templates/attention.cu.tmpl", "",
		"s_kp[c], j + c,", "s_kp[c], s_kr[c],", "cuda attention main mrope", 0},
	{"cuda attn mrope: kids indexed by the key's place in its tile", "templates/attention.cu.tmpl", "",
		"s_kp[c], j + c,", "s_kp[c], (long long)c,", "verify cuda qwen3_vl_8b", 0},
	{"cuda attn mrope: every query row rotated at its tile's first query's ids", "templates/attention.cu.tmpl", "",
		"s_orow[r] / qheads, s_h[r],", "s_orow[0] / qheads, s_h[r],", "verify cuda qwen3_vl_8b", 0},
	{"cuda attn xl: distance not clamped to the last row", "templates/attention_terms.cu.tmpl", "",
		"d = d < 0 ? 0 : d > a.n_rel - 1 ? a.n_rel - 1 : d;", "d = d < 0 ? 0 : d;", "verify cuda transformer_xl_base", 0},
	// 16-bit storage for the bias families (gen/cuda's gate).
	{"cuda attn 16-bit: alibi's f16/bf16 specs lose the attention form", "gen/cuda/attention.go", "",
		`b.DType != "f32" && family != "rope" && family != "alibi" && family != "rpe_bias"`, `b.DType != "f32" && family != "rope" && family != "rpe_bias"`, "cudahost attention16 bias", 0},
}
