package cuda

import (
	"fmt"
	"strconv"
	"strings"
)

// Attention is the template data of the CUDA attention form
// (templates/attention.cu.tmpl): one engine, FlashAttention-2's tiled
// online softmax with a split over keys (flash-decoding), into which the
// family's term (rope, alibi, rpe_bias, rpe_full or xl, the "attn_term_<family>"
// blocks) puts its positional encoding.
type Attention struct {
	// Family selects the term: "rope", "alibi", "rpe_bias", "rpe_full" or
	// "xl".
	Family string
	// HeadDim is the dimension of every q, k, v and out row.
	HeadDim int
	// Rows and Keys are the tile sizes: a block holds Rows (query, head)
	// rows of one KV head and walks its keys Keys at a time (Keys ≤ 32:
	// one bit of a 32-bit mask per key).
	Rows, Keys int
	// Threads is the block size of the main kernel.
	Threads int
	// SeqArg is the max_pos the rope term's frequencies see: "max_pos"
	// (a launcher argument) for dynamic NTK and LongRoPE, "0" otherwise.
	SeqArg string
	// TermArgs are the launcher's parameters that make the term's
	// attn_term_args ("table"; "aK, aV"; "rel, u_bias, v_bias, n_rel";
	// "qids, kids" for M-RoPE; empty for rope and alibi), in the struct's
	// order.
	TermArgs string
	// MRoPE (rope only): the rotation's positions are multimodal ids, AXES
	// per token (the launchers' qids and kids), the positions only mask.
	MRoPE bool
	// Decode: the form has the decode kernel (attnDecode).
	Decode bool
	// MMA: the form has the tensor-core kernel (attnMMA).
	MMA bool
	// RotatedTermArgs make attn_term_args in the rotated launcher (rope):
	// "qids, (const int *)0" for M-RoPE (no kids: its keys are not
	// rotated), empty otherwise.
	RotatedTermArgs string
}

// attnThreads is the block size of the attention kernel (four warps).
const attnThreads = 128

// attnSmemBudget caps the bytes of the tiles in shared memory (q, k or v,
// and the scores): with the rows' state and rope's frequency table (up to
// 4 KiB) the kernel stays under the 48 KiB of static shared memory every
// CUDA device allows a block.
const attnSmemBudget = 40 << 10

// AttnTiles returns the tile sizes of the attention kernel for head
// dimension hd: Rows·hd ≤ 2048 (the accumulator is Rows·hd/128 ≤ 16
// registers per thread), then the most keys (a power of two, 8 to 32) whose
// tiles fit attnSmemBudget, halving Rows until some do.
func AttnTiles(hd int) (rows, keys int, err error) {
	return attnTiles(hd, 1)
}

// attnQTiles is the number of [Rows][hd] query-side tiles of family's
// kernel: xl keeps q + v beside q + u (its term's shared memory).
func attnQTiles(family string) int {
	if family == "xl" {
		return 2
	}
	return 1
}

// HasAttentionTiles reports whether the attention kernel of family with
// head dimension hd has tiles that fit (AttnTiles; xl counts its second
// query tile). AddAttention emits no attention form for an rpe_full or xl
// spec without them (the Go form has no such limit), and fails for the
// other families.
func HasAttentionTiles(family string, hd int) bool {
	_, _, err := attnTiles(hd, attnQTiles(family))
	return err == nil
}

// attnTiles is AttnTiles with qt query tiles of [rows][hd] floats.
func attnTiles(hd, qt int) (rows, keys int, err error) {
	if hd < 1 {
		return 0, 0, fmt.Errorf("attention: head dim %d", hd)
	}
	rows = 16
	for rows > 1 && rows*hd > 2048 {
		rows /= 2
	}
	for ; rows >= 1; rows /= 2 {
		for keys = 32; keys >= 8; keys /= 2 {
			// q tile [rows][hd] (qt of them), k/v tile [keys][hd+1], scores [rows][keys].
			if 4*(qt*rows*hd+keys*(hd+1)+rows*keys) <= attnSmemBudget {
				return rows, keys, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("attention: head dim %d: no tiles fit %d bytes of shared memory", hd, attnSmemBudget)
}

// attnDecode reports whether the attention form of family with head
// dimension hd over dtype storage gets the decode kernel
// (templates/attention_decode.cu.tmpl, which checks the same bound): a
// plain term (rope, alibi, rpe_bias: no per-row work, the value is v),
// rows of whole 128-bit pieces, and the kernel's shared memory within
// 40 KiB. Its constants are the template's: 4 warps, tiles of 4 rows, a
// key's lanes the least power of two ≥ its pieces (at most 32), pieces of
// a lane loaded 4 keys ahead in all.
func attnDecode(family string, hd int, dtype string) bool {
	if family != "rope" && family != "alibi" && family != "rpe_bias" {
		return false
	}
	vec, esize := 4, 4
	if dtype != "f32" {
		vec, esize = 8, 2
	}
	if hd < vec || hd%vec != 0 {
		return false
	}
	const warps, rows = 4, 4
	pieces := hd / vec
	lanes := 32
	if pieces < 32 {
		for lanes = 1; lanes < pieces; lanes *= 2 {
		}
	}
	perLane := (pieces + lanes - 1) / lanes
	unroll := 1
	if perLane < 4 {
		unroll = 4 / perLane
	}
	warpKeys := 32 / lanes * unroll
	pool := warps * max(warpKeys, rows) * hd
	raw := warps * warpKeys * hd * esize
	// rope's angle steps of a run of min(warpKeys, 8) rotated keys, for
	// at most hd/2 pairs (kDecStepFloats).
	steps := 0
	if family == "rope" {
		steps = 2 * (min(warpKeys, 8) - 1) * (hd / 2)
	}
	return 4*(pool+rows*hd+steps)+8*rows*warps+raw <= 40<<10
}

// attnMMA reports whether the attention form of family with head dimension
// hd over dtype storage gets the tensor-core kernel
// (templates/attention_mma.cu.tmpl, which checks the same bound): bf16
// storage (an f32 p splits exactly into three bf16 parts; f16's exponent
// range would lose small p), a plain term (rope, M-RoPE, alibi, rpe_bias),
// hd a multiple of 16 (the mma's k) and at most 128 (its tiles: 64 query
// and 2·32 key rows of hd + 8 bf16, 8 KiB of f32 staging, in 42 KiB).
func attnMMA(family string, hd int, dtype string) bool {
	plain := family == "rope" || family == "alibi" || family == "rpe_bias"
	return plain && dtype == "bf16" && hd%16 == 0 && hd >= 16 && hd <= 128
}

// AddAttention gives the .cu the attention form of family ("rope", "alibi",
// "rpe_bias", "rpe_full" or "xl") with head dimension hd: the template data and the
// launchers posenc_<name>_attention, posenc_<name>_attention_paged (and,
// for rope, posenc_<name>_attention_rotated). seq adds the int max_pos argument of
// the rope specs whose frequencies switch at run time.
//
// Over f16 or bf16 storage rope specs (M-RoPE included), alibi and
// rpe_bias get the form: q, k, v, out (and rpe_bias's table) are stored as
// the spec's type and computed in float32; rope's rotated rows are rounded
// to the storage type as apply stores them (cudahost.Lib.VerifyStorage
// checks it with verify.RunAttentionStored). rpe_full and xl 16-bit specs
// get none (their Go packages have the float32 form only, as alibi's and
// rpe_bias's do).
func (b *Common) AddAttention(family string, hd int, seq bool) error {
	return b.addAttention(family, hd, seq, false)
}

// AddMRoPEAttention is AddAttention for an M-RoPE spec (rope's term, the
// rotation at multimodal ids): its launchers take qids (and, but for the
// rotated form, kids) after v, as the Go API's Attention, AttentionRotated
// and AttentionPaged do, AXES ids per token. The .cu must define kAxes and
// pair_axis (templates/mrope.cu.tmpl) before the attention form; no
// max_pos (M-RoPE has no run-time frequency switch).
func (b *Common) AddMRoPEAttention(hd int) error {
	return b.addAttention("rope", hd, false, true)
}

// addAttention is AddAttention; mrope (rope only) gives the term and the
// launchers M-RoPE's ids.
func (b *Common) addAttention(family string, hd int, seq, mrope bool) error {
	if mrope && family != "rope" {
		return fmt.Errorf("attention: M-RoPE ids for family %q", family)
	}
	if b.DType != "f32" && family != "rope" && family != "alibi" && family != "rpe_bias" {
		return nil
	}
	if (family == "rpe_full" || family == "xl") && !HasAttentionTiles(family, hd) {
		// Heads too wide for the tiles (hd above about 1000): no CUDA
		// attention form (cudahost.HasAttention agrees).
		return nil
	}
	rows, keys, err := attnTiles(hd, attnQTiles(family))
	if err != nil {
		return err
	}
	a := &Attention{Family: family, HeadDim: hd, Rows: rows, Keys: keys, Threads: attnThreads, SeqArg: "0",
		Decode: attnDecode(family, hd, b.DType), MMA: attnMMA(family, hd, b.DType)}
	T := b.Store
	params := []string{T + " *out", "const " + T + " *q", "const " + T + " *k", "const " + T + " *v"}
	heads, table := "", ""
	rotated := append([]string(nil), params...) // the rotated form's (rope)
	switch family {
	case "rope":
		if mrope {
			rotated = append(rotated, "const int *qids")
			params = append(params, "const int *qids", "const int *kids")
			a.TermArgs, a.MRoPE, a.RotatedTermArgs = "qids, kids", true, "qids, (const int *)0"
		}
	case "alibi":
		heads = " qheads must be HEADS."
	case "rpe_bias":
		params = append(params, "const "+T+" *table")
		heads = " qheads must be HEADS."
		table = " table is [HEADS][BUCKETS]."
		a.TermArgs = "table"
	case "rpe_full":
		params = append(params, "const "+T+" *aK", "const "+T+" *aV")
		table = " aK and aV are [BUCKETS][ATTN_HEAD_DIM], shared by every head (non-null)."
		a.TermArgs = "aK, aV"
	case "xl":
		params = append(params, "const "+T+" *rel", "const "+T+" *u_bias", "const "+T+" *v_bias", "long long n_rel")
		table = " rel is [n_rel][kvheads][ATTN_HEAD_DIM] (row m: distance n_rel−1−m; n_rel ≥ 1), u_bias and v_bias " +
			"[qheads][ATTN_HEAD_DIM] (all three non-null, else cudaErrorInvalidValue; n_rel·kvheads·ATTN_HEAD_DIM must fit 63 bits)."
		a.TermArgs = "rel, u_bias, v_bias, n_rel"
	default:
		return fmt.Errorf("attention: no CUDA term for family %q", family)
	}
	// The paged launcher: the caches for k and v, then the term's operands
	// (rpe_bias's table, …, M-RoPE's qids and kids); qpos,
	// q_start, slots, kpos, k_start (the Go API's order); lq, lk, then nseq
	// and cache_slots (apply_to_slots' type for a cache's row count).
	paged := []string{T + " *out", "const " + T + " *q", "const " + T + " *k_cache", "const " + T + " *v_cache"}
	paged = append(paged, params[4:]...)
	tail := []string{"const int *qpos", "const int *kpos", "int lq", "int lk", "int qheads", "int kvheads",
		"float scale", "int causal", "int window"}
	params = append(params, tail...)
	rotated = append(rotated, tail...)
	paged = append(paged, "const int *qpos", "const int *q_start", "const int *slots", "const int *kpos", "const int *k_start",
		"int lq", "int lk", "int nseq", "long long cache_slots", "int qheads", "int kvheads", "float scale", "int causal", "int window")
	seqDoc := ""
	if seq {
		a.SeqArg = "max_pos"
		params = append(params, "int max_pos")
		rotated = append(rotated, "int max_pos")
		paged = append(paged, "int max_pos")
		seqDoc = " max_pos is the largest non-negative position of qpos and kpos (−1 for none): it selects the frequencies, as the Go API's seq_len."
	}
	params = append(params, Stream)
	rotated = append(rotated, Stream)
	paged = append(paged, Stream)
	b.AttnForm = a
	b.Consts = append(b.Consts, Define{Name: "ATTN_HEAD_DIM", Value: strconv.Itoa(hd)})
	doc := "Attention: out[lq][qheads][ATTN_HEAD_DIM] = softmax over keys of scale·q·k + bias, times v " +
		"(q [lq][qheads][ATTN_HEAD_DIM], k and v [lk][kvheads][ATTN_HEAD_DIM], query head h reads KV head h/(qheads/kvheads)); " +
		"query i at qpos[i], key j at kpos[j]; key j is masked for query i when kpos[j] < 0 (padding), when causal and kpos[j] > qpos[i], " +
		"when window > 0 and qpos[i] − kpos[j] ≥ window; a query with no unmasked key gets zeros. " +
		"Few (query tile, KV head) blocks split the keys over more blocks (flash-decoding) with a cudaMallocAsync workspace on stream, " +
		"freed on it (no split when that allocation fails). qheads a positive multiple of kvheads, else cudaErrorInvalidValue."
	switch family {
	case "rope":
		if mrope {
			doc += " q and k are unrotated: both are rotated inside as by apply_mrope at their ids, qids[lq][AXES] and kids[lk][AXES] " +
				"(token-major: qids[i*AXES + a] is query i's position on axis a, pair p turning by the id of its axis, as apply_mrope's pos); " +
				"qpos and kpos only mask (pass each token's index in its sequence: the ids do not order an image's patches). " +
				"qids and kids must not be null when the call reads them (lq > 0; kids: lk > 0), else cudaErrorInvalidValue."
			break
		}
		doc += " q and k are unrotated: both are rotated inside as by apply (q at qpos, k at kpos)." + seqDoc
	case "alibi":
		doc += " bias = −slope_h·|qpos − kpos|." + heads
	case "rpe_bias":
		doc += " bias = table[h][bucket(qpos − kpos)]." + heads + table
	case "rpe_full":
		doc = strings.Replace(doc, "scale·q·k + bias, times v", "scale·q·(k + aK[b]), times v + aV[b]", 1)
		doc += " Shaw et al. 2018: b = clamp(qpos − kpos, −(R_MAX−1), R_MAX−1) + R_MAX−1; any qheads." + table
	case "xl":
		doc = strings.Replace(doc, "scale·q·k + bias, times v", "scale·((q + u_h)·k + (q + v_h)·rel_d), times v", 1)
		doc += " Transformer-XL (Dai et al. 2019, A^rel with the projections applied by the caller): d = qpos − kpos clamped " +
			"to [0, n_rel−1], rel_d its row n_rel−1−d of KV head g, u_h and v_h row h of u_bias and v_bias; any qheads." + table
	}
	b.AddLauncher("attention", doc, params...)
	if family == "rope" {
		rdoc := "AttentionRotated: attention with k already rotated at kpos (a rotated KV cache, as apply_to_slots writes it); q is rotated inside." + seqDoc
		if mrope {
			rdoc = "AttentionRotated: attention with k already rotated (apply_mrope's output at the keys' ids, written once per cache entry); " +
				"q is rotated inside at qids[lq][AXES] (non-null when lq > 0); no kids. Other arguments as attention."
		}
		b.AddLauncher("attention_rotated", rdoc, rotated...)
	}
	pagedDoc := "AttentionPaged: attention over nseq sequences in one call, keys in a paged cache (vLLM's slot mapping): sequence t has the queries " +
		"q_start[t]..q_start[t+1] (rows of q and out, at qpos) and the keys k_start[t]..k_start[t+1] (entries of slots and kpos); its key j is " +
		"row slots[j] of k_cache and v_cache, [cache_slots][kvheads][ATTN_HEAD_DIM] (slot = page*page_size + offset, pages in any order). " +
		"A query sees only its own sequence's keys, with the masks of attention. q_start and k_start (nseq+1 entries) must begin at 0, " +
		"never decrease and end at lq and lk: they and slots are device memory, which the launcher does not read, so that contract is the caller's " +
		"(as vLLM's); whatever they hold, nothing outside the arrays is read or written (starts are clamped to [0, lq] and [0, lk], a key whose " +
		"slot is outside [0, cache_slots) is padding), but out rows no sequence covers are left unwritten. nseq = 0 needs lq = lk = 0. " +
		"Other checks as attention."
	switch {
	case mrope:
		pagedDoc += " The cache holds unrotated k, rotated inside at kids: kids[lk][AXES] holds the ids of key entry j " +
			"(indexed as kpos and slots, not by slot), qids[lq][AXES] those of the queries."
	case family == "rope":
		pagedDoc += " The cache holds unrotated k, rotated inside at kpos (max_pos over the whole call)."
	}
	b.AddLauncher("attention_paged", pagedDoc+seqDoc, paged...)
	return nil
}
