package main

// Mutation is one deliberate bug: in File (relative to the repository
// root), the first Old after the one occurrence of After (or the one
// occurrence of Old when After is empty) becomes New; with Nth > 0, the
// Nth occurrence of Old after After (or after the start of the file), which
// need not be unique. Check names the entry of checks that must fail on
// the mutated tree.
type Mutation struct {
	Name, File, After, Old, New, Check string
	Nth                                int
}

// Check is a command run in the scratch copy's root, with Env added to the
// environment; a non-zero exit status catches the mutation. The go test
// checks pass -failfast: once a variant's subtest fails (go before avx2
// before avx512) the mutation is caught, and the later variants, which
// could only fail as well or pass, are not run; a check that passes runs
// them all as before.
type Check struct {
	Env  []string
	Args []string
}

// goTest runs a generated package's TestVariants natively (go, AVX2 and
// AVX-512 variants).
func goTest(pkg string) Check {
	return Check{Args: []string{"go", "test", "-count=1", "-failfast", "-run", "^TestVariants$", "./generated/" + pkg}}
}

// neonTest runs a generated package's TestVariants for arm64 under qemu,
// its NEON subtest only: a NEON mutation does not change the go variant,
// which under qemu would cost as much again.
func neonTest(pkg string) Check {
	return Check{Env: []string{"GOARCH=arm64"},
		Args: []string{"go", "test", "-count=1", "-failfast", "-exec", "qemu-aarch64-static", "-run", "^TestVariants$/^neon$", "./generated/" + pkg}}
}

// goldenTest runs TestVariants of a package generated from a golden spec
// (internal/goldens), natively.
func goldenTest(pkg string) Check {
	return Check{Args: []string{"go", "test", "-count=1", "-failfast", "-run", "^TestVariants$", "./internal/goldens/" + pkg}}
}

// neonGoldenTest runs TestVariants of a package generated from a golden
// spec (internal/goldens) for arm64 under qemu, its NEON subtest only (as
// neonTest).
func neonGoldenTest(pkg string) Check {
	return Check{Env: []string{"GOARCH=arm64"},
		Args: []string{"go", "test", "-count=1", "-failfast", "-exec", "qemu-aarch64-static", "-run", "^TestVariants$/^neon$", "./internal/goldens/" + pkg}}
}

// verify runs `posenc verify -targets targets` on specs (zoo names, or
// spec files), which regenerates the packages from the mutated generator
// and templates first.
func verify(targets string, specs ...string) Check {
	args := []string{"go", "run", "./cmd/posenc", "verify", "-targets", targets}
	for _, s := range specs {
		if len(s) > 5 && s[len(s)-5:] == ".yaml" {
			args = append(args, s)
		} else {
			args = append(args, "-zoo", s)
		}
	}
	return Check{Args: args}
}

// checks are the commands the mutations name.
var checks = map[string]Check{
	"test llama2_7b":                  goTest("llama2_7b"),
	"test gptj_6b":                    goTest("gptj_6b"),
	"test bloom_7b1":                  goTest("bloom_7b1"),
	"allocs bloom_7b1":                {Args: []string{"go", "test", "-count=1", "-failfast", "-run", "^TestRampPathsAllocateNothing$", "./generated/bloom_7b1"}},
	"test t5_base":                    goTest("t5_base"),
	"test transformer_base":           goTest("transformer_base"),
	"test shaw2018_base":              goTest("shaw2018_base"),
	"test qwen25_vl_7b":               goTest("qwen25_vl_7b"),
	"test transformer_xl_base":        goTest("transformer_xl_base"),
	"golden grope_bf16_half":          goldenTest("grope_bf16_half"),
	"golden grope_f16_half":           goldenTest("grope_f16_half"),
	"golden grope_temp_f16":           goldenTest("grope_temp_f16"),
	"golden grope_llama4_bf16":        goldenTest("grope_llama4_bf16"),
	"golden grope_llama31_bf16":       goldenTest("grope_llama31_bf16"),
	"golden grope_llama31_f16":        goldenTest("grope_llama31_f16"),
	"golden gmrope_qwen25_bf16":       goldenTest("gmrope_qwen25_bf16"),
	"golden gmrope_qwen3_f16":         goldenTest("gmrope_qwen3_f16"),
	"neon llama2_7b":                  neonTest("llama2_7b"),
	"neon gptj_6b":                    neonTest("gptj_6b"),
	"neon bloom_7b1":                  neonTest("bloom_7b1"),
	"neon transformer_base":           neonTest("transformer_base"),
	"neon shaw2018_base":              neonTest("shaw2018_base"),
	"neon transformer_xl_base":        neonTest("transformer_xl_base"),
	"neon golden grope_bf16_half":     neonGoldenTest("grope_bf16_half"),
	"neon golden grope_f16_half":      neonGoldenTest("grope_f16_half"),
	"neon golden grope_temp_f16":      neonGoldenTest("grope_temp_f16"),
	"neon golden grope_llama4_bf16":   neonGoldenTest("grope_llama4_bf16"),
	"qemu asm/rope scaleRows16":       {Args: []string{"go", "test", "-count=1", "-failfast", "-run", "^TestScaleRows16QEMU$", "./asm/rope"}},
	"qemu asm/attention":              {Args: []string{"go", "test", "-count=1", "-failfast", "-run", "^TestKernelsQEMU$", "./asm/attention"}},
	"qemu asm/attention 16":           {Args: []string{"go", "test", "-count=1", "-failfast", "-run", "^TestKernels16QEMU$", "./asm/attention"}},
	"asm/rope scaleRows16 amd64":      {Args: []string{"go", "test", "-count=1", "-failfast", "-run", "^TestScaleRows16AMD64$", "./asm/rope"}},
	"verify cuda llama2_7b":           verify("cuda-host", "llama2_7b"),
	"cuda attention main rope":        {Args: []string{"go", "test", "-count=1", "-failfast", "-run", "^TestAttentionSplitPolicy$/^rope_half$/^main$", "./gen/cuda"}},
	"cuda attention main mrope":       {Args: []string{"go", "test", "-count=1", "-failfast", "-run", "^TestAttentionSplitPolicy$/^mrope_attn$/^main$", "./gen/cuda"}},
	"cudahost attention16":            {Args: []string{"go", "test", "-count=1", "-failfast", "-run", "^TestAttentionStored16$", "./verify/cudahost"}},
	"cudahost attention16 bias":       {Args: []string{"go", "test", "-count=1", "-failfast", "-run", "^TestAttentionStored16Bias$", "./verify/cudahost"}},
	"cuda attention mma":              {Args: []string{"go", "test", "-count=1", "-failfast", "-run", "^TestAttentionMMA$/^alibi_mma$/^mma$", "./gen/cuda"}},
	"cuda attention mma chosen":       {Args: []string{"go", "test", "-count=1", "-failfast", "-run", "^TestAttentionMMAChosen$/^default$", "./gen/cuda"}},
	"verify cuda transformer_base":    verify("cuda-host", "transformer_base"),
	"verify cuda bloom_7b1":           verify("cuda-host", "bloom_7b1"),
	"verify cuda t5_base":             verify("cuda-host", "t5_base"),
	"verify cuda shaw2018_base":       verify("cuda-host", "shaw2018_base"),
	"verify cuda transformer_xl_base": verify("cuda-host", "transformer_xl_base"),
	"verify cuda rope_il_bf16":        verify("cuda-host", "tools/mutate/testdata/rope_il_bf16.yaml"),
	"verify cuda rpe_f16":             verify("cuda-host", "tools/mutate/testdata/rpe_f16.yaml"),
	"verify cuda xl_bf16":             verify("cuda-host", "tools/mutate/testdata/xl_bf16.yaml"),
	"verify cuda temp_mrope_bf16":     verify("cuda-host", "tools/mutate/testdata/temp_mrope_bf16.yaml"),
	"verify cuda qwen3_vl_8b":         verify("cuda-host", "qwen3_vl_8b"),
	"verify go llama31_8b":            verify("go", "llama31_8b"),
	"verify go bloom_176b":            verify("go", "bloom_176b"),
	"verify go t5_base":               verify("go", "t5_base"),
	"verify go transformer_base":      verify("go", "transformer_base"),
	"verify avx2":                     verify("avx2", "llama2_7b"),
	"verify neon":                     verify("neon", "gptj_6b"),
}

// mutations is the suite: every kind of source (generated Go, amd64 and
// arm64 assembly, CUDA templates, the generator) and every family, with
// the RoPE large-call (streaming) order of the AVX2 kernels, Inverse on
// every backend, and f16/bf16 CUDA storage.
var mutations = []Mutation{
	// The attention form (generated Go, the engine's template, its kernels).
	{"attn: causal mask admits the query's own position only", "generated/llama2_7b/llama2_7b_attention.go", "",
		"o.Causal && kp > qp", "o.Causal && kp >= qp", "test llama2_7b", 0},
	{"attn: window one key longer", "generated/bloom_7b1/bloom_7b1_attention.go", "",
		"qp-kp >= int64(o.Window)", "qp-kp > int64(o.Window)", "test bloom_7b1", 0},
	{"attn: a row taken as seeing the whole tile one key too early", "generated/bloom_7b1/bloom_7b1_attention.go", "",
		"qp-kmin < int64(o.Window)", "qp-kmin <= int64(o.Window)", "test bloom_7b1", 0},
	{"attn: alibi without the nearest-key shift (rows seeing the whole tile)", "generated/bloom_7b1/bloom_7b1_attention.go", "",
		"float64(dist-dref)", "float64(dist-0*dref)", "test bloom_7b1", 1},
	{"attn: alibi without the nearest-key shift (masked rows)", "generated/bloom_7b1/bloom_7b1_attention.go", "",
		"float64(dist-dref)", "float64(dist-0*dref)", "test bloom_7b1", 2},
	{"attn: rpe_bias distance sign (rows seeing the whole tile)", "generated/t5_base/t5_base_attention.go", "",
		"trow[Bucket(int(rel))]", "trow[Bucket(int(-rel))]", "test t5_base", 1},
	{"attn: rpe_bias distance sign (masked rows)", "generated/t5_base/t5_base_attention.go", "",
		"trow[Bucket(int(rel))]", "trow[Bucket(int(-rel))]", "test t5_base", 2},
	{"attn: online softmax sum not rescaled", "generated/t5_base/t5_base_attention.go", "",
		"sc.l[r] = sc.l[r]*sc.alpha[r] + sc.ts[r]", "sc.l[r] = sc.l[r] + sc.ts[r]", "test t5_base", 0},
	{"attn: online softmax accumulator not rescaled (portable valuesKV)", "generated/llama2_7b/llama2_7b_attention.go", "",
		"ar[d] *= a", "ar[d] *= 1", "test llama2_7b", 0},
	{"attn: alibi ramp (consecutive keys) without the nearest-key shift", "generated/bloom_7b1/bloom_7b1_attention.go", "",
		"t0 := qp - kmin - dref", "t0 := qp - kmin", "test bloom_7b1", 0},
	{"attn: rpe_bias far tile's constant bias from the wrong side", "generated/t5_base/t5_base_attention.go", "",
		"shift = trow[Bucket(BucketSpan)]", "shift = trow[Bucket(-BucketSpan)]", "test t5_base", 0},
	{"attn: rpe_bias far tile's constant bias (keys after the query) from the wrong side", "generated/t5_base/t5_base_attention.go", "",
		"shift = trow[Bucket(-BucketSpan)]", "shift = trow[Bucket(BucketSpan)]", "test t5_base", 0},
	{"attn: rpe_bias far tile's constant bias not taken from the exponent", "generated/t5_base/t5_base_attention.go", "",
		"sc.m[r]-shift, &sc.sum", "sc.m[r], &sc.sum", "test t5_base", 0},
	{"attn: rope prefill keys rotated in the caller's k", "generated/llama2_7b/llama2_7b_attention.go", "",
		"attnTileRows(sc.k, ks.k, ks.slots, true,", "attnTileRows(sc.k, ks.k, ks.slots, false,", "test llama2_7b", 0},
	{"attn: query rotation skipped", "generated/llama2_7b/llama2_7b_attention.go", "",
		"rotateTokensAt(operand{qr, qr, hb, hb * HeadDim, HeadDim}, operand{}, qpos[i0:i0+nb], n, 1)", "_ = n", "test llama2_7b", 0},
	{"attn asm: valuesKV zero-weight skip always taken", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·valuesKVAVX512(SB)",
		"JZ           kv_zero", "JMP          kv_zero", "test llama2_7b", 0},
	{"attn asm: valuesKV one-group zero-weight skip always taken", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·valuesKVAVX512(SB)",
		"JZ           v1_zero", "JMP          v1_zero", "test llama2_7b", 0},
	{"attn asm: valuesKV key blocks' zero-weight skip never taken (a padding key's NaN reaches the row)", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·valuesKVAVX2(SB)",
		"JZ           vb_zero", "JO           vb_zero", "test llama2_7b", 1},
	{"attn asm: scoresKV AVX-512 block reduction takes the wrong 128-bit blocks", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·scoresKVAVX512(SB)",
		"VSHUFF32X4    $0x88,", "VSHUFF32X4    $0x8a,", "test llama2_7b", 0},
	{"attn asm: scoresKV AVX2 block sums a row's keys out of order", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·scoresKVAVX2(SB)",
		"VHADDPS      Y3, Y2, Y1", "VHADDPS      Y2, Y3, Y1", "test llama2_7b", 1},
	{"attn asm: scoresKV AVX2 decode key blocks sum a row's keys out of order", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·scoresKVAVX2(SB)",
		"VHADDPS      Y3, Y2, Y1", "VHADDPS      Y2, Y3, Y1", "test llama2_7b", 2},
	{"attn asm: scoresKV AVX-512 decode key blocks store row 2's sums as row 1's", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·scoresKVAVX512(SB)",
		"VEXTRACTF32X4 $0x02, Z1,", "VEXTRACTF32X4 $0x01, Z1,", "test llama2_7b", 2},
	{"attn asm: valuesKV decode key blocks skip the first key's weight", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·valuesKVAVX512(SB)",
		"JZ           vb_zero", "JMP          vb_zero", "test llama2_7b", 1},
	{"attn asm: valuesKV one-group path does not rescale", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·valuesKVAVX512(SB)",
		"VMULPS       Z0, Z1, Z1", "VMOVUPS      Z1, Z1", "test llama2_7b", 0},
	{"attn asm: valuesKV streaming path does not rescale", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·valuesKVAVX2(SB)",
		"JZ    kv_rescale_done", "JMP   kv_rescale_done", "test llama2_7b", 0},
	{"attn asm: maxRow loses a NaN behind a number", "generated/bloom_7b1/bloom_7b1_amd64.s", "TEXT ·maxRowAVX512(SB)",
		"JZ            max_store", "JMP           max_store", "test bloom_7b1", 0},
	{"attn neon: scoresKV q floats 20..23 meet k floats 16..19", "generated/llama2_7b/llama2_7b_arm64.s", "TEXT ·scoresKVNEON(SB)",
		"VFMLA V17.S4, V5.S4, V1.S4", "VFMLA V16.S4, V5.S4, V1.S4", "neon llama2_7b", 0},
	{"attn neon: valuesKV zero-weight skip never taken (padding NaN reaches the row)", "asm/attention/neon.go", "",
		"e.CBZ(arm64.R17, skip)", "e.CBZ(arm64.R10, skip)", "qemu asm/attention", 0},
	{"attn neon: expShift block exponent m − x (FSUB operands swapped)", "generated/llama2_7b/llama2_7b_arm64.s", "TEXT ·expShiftNEON(SB)",
		"WORD $0x4eb0d400", "WORD $0x4ea0d600", "neon llama2_7b", 0},
	{"attn neon: valuesKV does not rescale", "generated/llama2_7b/llama2_7b_arm64.s", "TEXT ·valuesKVNEON(SB)",
		"CBZ R12, kv_rescaled", "B kv_rescaled", "neon llama2_7b", 0},
	{"attn neon: maxRow takes the minimum of the last floats", "generated/bloom_7b1/bloom_7b1_arm64.s", "TEXT ·maxRowNEON(SB)",
		"FMAXS F4, F0, F0", "FMINS F4, F0, F0", "neon bloom_7b1", 0},
	{"attn asm: scoresKVRope rotates with the wrong sign", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·scoresKVRopeAVX512(SB)",
		"VFNMADD231PS", "VFMADD231PS", "test llama2_7b", 1},
	{"attn: fused rope rows of positions outside the table not computed", "generated/llama2_7b/llama2_7b_attention.go", "",
		"freqsSet.fillRows(rows, kpos)", "_ = rows", "test llama2_7b", 0},
	{"attn gen: scoresKVRope key blocks rotate the first key four times", "asm/attention/amd64_blocked.go", "",
		"g.rotateHead(pieces, rope, kg, kst, t, t, false)", "g.rotateHead(pieces, rope, kg, kst, 0, t, false)", "verify avx2", 0},
	{"attn asm: scoresKVRope's key-by-key path dots q's second piece with the first rotated piece kept in registers", "generated/llama2_7b/llama2_7b_amd64.s", "kv_by_key288:",
		"VMULPS        64(R8), Z4, Z9", "VMULPS        64(R8), Z2, Z9", "test llama2_7b", 0},
	{"attn gen: head-blocked valuesKV gives every row the first row's weights", "asm/attention/amd64_valueblocks.go", "",
		"wm := g.rowMem(pr, pst, b)", "wm := g.rowMem(pr, pst, 0)", "verify avx2", 0},
	{"attn gen: head-blocked valuesKV adds the first key's values for every key", "asm/attention/amd64_valueblocks.go", "",
		"vv[i] = g.loadKV(p, valMem(t, g.kvBytes()*p.Off))", "vv[i] = g.loadKV(p, valMem(0, g.kvBytes()*p.Off))", "verify avx2", 0},
	{"attn M-RoPE 16-bit: key tiles rotated the wrong way", "internal/goldens/gmrope_qwen25_bf16/gmrope_qwen25_bf16_attention.go", "",
		"rotateMRoPE(x, operand{}, ks.ids[j0*Axes:(j0+len(kpos))*Axes], 1)", "rotateMRoPE(x, operand{}, ks.ids[j0*Axes:(j0+len(kpos))*Axes], -1)", "golden gmrope_qwen25_bf16", 0},
	{"attn M-RoPE 16-bit: decode keys not rotated", "internal/goldens/gmrope_qwen25_bf16/gmrope_qwen25_bf16_attention.go", "",
		"ks.rotateTile(operand{sc.k16, ks.k[j0*row:], o.KVHeads, row, HeadDim}, j0, kpos, n)", "copy(sc.k16[:nt*row], ks.k[j0*row:])", "golden gmrope_qwen25_bf16", 0},
	{"attn M-RoPE 16-bit: gathered keys not rotated", "internal/goldens/gmrope_qwen3_f16/gmrope_qwen3_f16_attention.go", "",
		"ks.rotateTile(operand{k16, k16, sh.groups, st, HeadDim}, j0, kpos, n)", "_ = st", "golden gmrope_qwen3_f16", 0},
	{"attn neon 16-bit: a two-element tail read as four", "asm/attention/neon.go", "func (st kvElems) loadStep",
		"e.LoadS(first, base, inc)", "e.LoadD(first, base, inc)", "qemu asm/attention 16", 0},
	{"attn neon 16-bit: a one-element tail's other lanes not cleared", "asm/attention/neon.go", "",
		"e.VEOR(first.B16(), first.B16(), first.B16())", "", "qemu asm/attention 16", 0},
	{"attn neon 16-bit: bf16 widened as f16", "asm/attention/neon.go", "",
		"e.Widen16(string(st), first+arm64.VReg(r))", "e.Widen16(\"f16\", first+arm64.VReg(r))", "qemu asm/attention 16", 0},
	{"attn neon 16-bit: a KV head's row 4·HeadDim bytes after the last", "asm/attention/neon.go", "",
		"e.AddImm(arm64.R11, arm64.R11, st.size()*d)", "e.AddImm(arm64.R11, arm64.R11, 4*d)", "qemu asm/attention 16", 0},
	{"attn cuda 16-bit: rotated key rows not rounded to the storage type", "templates/attention_terms.cu.tmpl", "",
		"x0 = ld(&r0);", "(void)r0;", "cudahost attention16", 0},
	{"attn gen: alibi bias sign in the template", "gen/attention/terms.go.tmpl", "",
		"s[j] += float32(-slope * float64(dist-dref))", "s[j] += float32(slope * float64(dist-dref))", "verify go bloom_176b", 0},
	// rpe_full's attention form (Shaw et al.: the a^K bucket table, the a^V
	// weights per bucket).
	{"attn rpe_full: a^V term left out", "generated/shaw2018_base/shaw2018_base_attention.go", "",
		"active.axpyRows(sc.acc[r*HeadDim:(r+1)*HeadDim], sc.wb[r*Buckets:(r+1)*Buckets], aV)", "_ = aV", "test shaw2018_base", 0},
	{"attn rpe_full: bucket weights not rescaled when the maximum grows", "generated/shaw2018_base/shaw2018_base_attention.go", "",
		"wr[b] *= a", "wr[b] *= 1", "test shaw2018_base", 0},
	{"attn rpe_full: near keys' a^V bucket of the opposite distance", "generated/shaw2018_base/shaw2018_base_attention.go", "",
		"rel := min(max(qp-int64(kpos[j]), -BucketSpan), BucketSpan)", "rel := min(max(int64(kpos[j])-qp, -BucketSpan), BucketSpan)", "test shaw2018_base", 0},
	{"attn rpe_full: far keys' a^V bucket from the wrong side", "generated/shaw2018_base/shaw2018_base_attention.go", "",
		"wr[Bucket(BucketSpan)] += sc.ts[r]", "wr[Bucket(-BucketSpan)] += sc.ts[r]", "test shaw2018_base", 0},
	{"attn rpe_full: a^K table of the row before", "generated/shaw2018_base/shaw2018_base_attention.go", "",
		"trow := sc.qa[r*Buckets : (r+1)*Buckets]", "trow := sc.qa[max(r-1, 0)*Buckets : (max(r-1, 0)+1)*Buckets]", "test shaw2018_base", 0},
	// M-RoPE's attention form (rotation at the tokens' ids, masks by position).
	{"attn mrope: queries rotated at their positions, not their ids", "generated/qwen25_vl_7b/qwen25_vl_7b_attention.go", "",
		"rotateMRoPE(operand{qr, qr, hb, hb * HeadDim, HeadDim}, operand{}, qids[i0*Axes:(i0+nb)*Axes], 1)",
		"rotateTokensAt(operand{qr, qr, hb, hb * HeadDim, HeadDim}, operand{}, qpos[i0:i0+nb], 0, 1)", "test qwen25_vl_7b", 0},
	{"attn mrope: gathered keys rotated backwards", "generated/qwen25_vl_7b/qwen25_vl_7b_attention.go", "",
		"ks.rotateTile(operand{kt, kt, sh.groups, kStride, HeadDim}, j0, kpos, n)",
		"rotateMRoPE(operand{kt, kt, sh.groups, kStride, HeadDim}, operand{}, ks.ids[j0*Axes:(j0+nt)*Axes], -1)", "test qwen25_vl_7b", 0},
	{"attn mrope: every paged sequence takes the first queries' ids", "generated/qwen25_vl_7b/qwen25_vl_7b_attention.go", "",
		"qids[q0*Axes:q1*Axes]", "qids[0:(q1-q0)*Axes]", "test qwen25_vl_7b", 0},
	// xl's attention form (Transformer-XL: q + u against the keys, q + v
	// against the rows of rel, in place for a run of keys or gathered).
	{"attn xl: q + v against rel takes u as well", "generated/transformer_xl_base/transformer_xl_base_attention.go", "",
		"qv[d] = (x + vb[d]) * o.Scale", "qv[d] = (x + vb[d] + ub[d]) * o.Scale", "test transformer_xl_base", 0},
	{"attn xl: gathered rows clamp distances at 1", "generated/transformer_xl_base/transformer_xl_base_attention.go", "",
		"min(max(qp-int64(kp), 0), nrel-1)", "min(max(qp-int64(kp), 1), nrel-1)", "test transformer_xl_base", 0},
	{"attn xl: a run's rows read one distance too far", "generated/transformer_xl_base/transformer_xl_base_attention.go", "",
		"attnTileRows(sc.rt, rel, nil, apart, int(first), nt", "attnTileRows(sc.rt, rel, nil, apart, int(max(first-1, 0)), nt", "test transformer_xl_base", 0},
	{"attn xl: Toeplitz block's columns one off for odd rows", "generated/transformer_xl_base/transformer_xl_base_attention.go", "",
		"c0 := int(dhi - int64(qpos[b+r/hb]) + int64(kpos[0]))", "c0 := int(dhi - int64(qpos[b+r/hb]) + int64(kpos[0]) - int64(r%2))", "test transformer_xl_base", 0},
	{"attn xl: position term added to the row before", "generated/transformer_xl_base/transformer_xl_base_attention.go", "",
		"range sc.sr[r*tile : r*tile+nt]", "range sc.sr[max(r-1, 0)*tile : max(r-1, 0)*tile+nt]", "test transformer_xl_base", 0},

	// The 16-bit attention form (f16/bf16 storage: widened tiles, scoresKV16
	// and valuesKV16 reading a decode block in place, one output rounding).
	{"attn16: decode block's values read from the keys", "internal/goldens/grope_bf16_half/grope_bf16_half_attention.go", "",
		"active.valuesKV16(sc.acc, sc.s, ks.v[j0*row:(j0+nt)*row]", "active.valuesKV16(sc.acc, sc.s, ks.k[j0*row:(j0+nt)*row]", "golden grope_bf16_half", 0},
	{"attn16: decode block's keys always from the first tile", "internal/goldens/grope_f16_half/grope_f16_half_attention.go", "",
		"kt16, kStride = ks.k[j0*row:(j0+nt)*row], row", "kt16, kStride = ks.k[0:nt*row], row", "golden grope_f16_half", 0},
	{"attn16: queries not rotated", "internal/goldens/grope_f16_half/grope_f16_half_attention.go", "",
		"rotateTokensAt(operand{qr, qr, hb, hb * HeadDim, HeadDim}, operand{}, qpos[i0:i0+nb], n, 1)", "_ = n", "golden grope_f16_half", 0},
	{"attn16: output biased by half an ulp before its rounding", "internal/goldens/grope_bf16_half/grope_bf16_half_attention.go", "",
		"dst[d] = narrow(a * inv)", "dst[d] = narrow(a * inv * (1 + 0x1p-9))", "golden grope_bf16_half", 0},
	{"attn16 asm: scoresKV16 widens bf16 one bit short", "internal/goldens/grope_bf16_half/grope_bf16_half_amd64.s", "TEXT ·scoresKV16AVX512(SB)",
		"VPSLLD        $0x10, (R8), Z1", "VPSLLD        $0x0f, (R8), Z1", "golden grope_bf16_half", 0},
	{"attn16 asm: valuesKV16 (AVX-512) loads the even words for the odd elements", "internal/goldens/grope_llama31_bf16/grope_llama31_bf16_amd64.s", "TEXT ·valuesKV16AVX512(SB)",
		"MOVL  $0xaaaaaaaa, AX", "MOVL  $0x55555555, AX", "golden grope_llama31_bf16", 0},
	{"attn16 asm: valuesKV16 (AVX-512) reads keys 4–7 of a block as keys 2–5", "internal/goldens/grope_llama31_bf16/grope_llama31_bf16_amd64.s", "TEXT ·valuesKV16AVX512(SB)",
		"LEAQ       (R9)(DX*4), R10", "LEAQ       (R9)(DX*2), R10", "golden grope_llama31_bf16", 0},
	{"attn16 asm: pairOrder16 puts an odd element back in an even place", "internal/goldens/grope_llama31_bf16/grope_llama31_bf16_amd64.s", "",
		"DATA pair16_lo<>+4(SB)/4, $0x00000010", "DATA pair16_lo<>+4(SB)/4, $0x00000000", "golden grope_llama31_bf16", 0},
	{"attn16: a decode block's acc left in pair order", "internal/goldens/grope_llama31_bf16/grope_llama31_bf16_attention.go", "",
		"active.pairOrder16(sc.acc[:nr*HeadDim], 1)", "_ = sc.acc", "golden grope_llama31_bf16", 0},
	{"attn16: a decode block's q not put in pair order", "internal/goldens/grope_llama31_bf16/grope_llama31_bf16_attention.go", "",
		"active.pairOrder16(sc.q[:nr*HeadDim], 0)", "_ = sc.q", "golden grope_llama31_bf16", 0},
	{"attn16 asm: scoresKVRope16 rounds rotated bf16 keys without the half-ulp addend", "internal/goldens/grope_llama31_bf16/grope_llama31_bf16_amd64.s", "TEXT ·scoresKVRope16AVX512(SB)",
		"VMOVUPS      c32x16_00007fff<>+0(SB), Z2", "VMOVUPS      c32x16_00000001<>+0(SB), Z2", "golden grope_llama31_bf16", 0},
	{"attn16 asm: scoresKVRope16 (AVX2) rounds the first half's rotated f16 keys into the second", "internal/goldens/grope_llama31_f16/grope_llama31_f16_amd64.s", "TEXT ·scoresKVRope16AVX2(SB)",
		"VCVTPS2PH    $0x00, Y1, X0", "VCVTPS2PH    $0x00, Y2, X0", "golden grope_llama31_f16", 0},
	{"attn16 asm: valuesKV16 (AVX2) reads f16 values as bf16", "internal/goldens/grope_f16_half/grope_f16_half_amd64.s", "TEXT ·valuesKV16AVX2(SB)",
		"VCVTPH2PS    (R9), Y11", "VPMOVZXWD    (R9), Y11", "golden grope_f16_half", 0},

	// Generated Go.
	{"go: rope generic pair sign (four-head pass, first head)", "generated/llama2_7b/llama2_7b_generic.go", "",
		"x0*c-x1*s, x1*c+x0*s", "x0*c+x1*s, x1*c+x0*s", "test llama2_7b", 1},
	{"go: rope generic pair sign (the heads left after the four-head passes)", "generated/llama2_7b/llama2_7b_generic.go", "for ; h < heads; h++ {",
		"x0*c-x1*s, x1*c+x0*s", "x0*c+x1*s, x1*c+x0*s", "test llama2_7b", 0},
	{"go: rope generic Inverse sign dropped", "generated/llama2_7b/llama2_7b_generic.go", "",
		"neg[i] = sign * sn[i]", "neg[i] = sn[i]", "test llama2_7b", 0},
	{"go: rope generic four-head pass rotates the third head with the second's values", "generated/llama2_7b/llama2_7b_generic.go", "",
		"x0, x1 = s2[i], s2[nFreq+i]", "x0, x1 = s1[i], s1[nFreq+i]", "test llama2_7b", 0},
	{"go: rope exact path middle digit of hi read from the wrong bits", "generated/llama2_7b/llama2_7b.go", "",
		"(2*exactLow+int(hi>>exactShift&(exactLow-1)))", "(2*exactLow+int(hi&(exactLow-1)))", "test llama2_7b", 0},
	{"go: rope exact path hi-row cache ignores the key", "generated/llama2_7b/llama2_7b.go", "",
		"r != nil && r.hi == hi", "r != nil", "test llama2_7b", 0},
	{"go: rope exact path chunk cache ignores the positions", "generated/llama2_7b/llama2_7b.go", "",
		"return slices.Equal(r.pos[:r.n], pos)", "return len(slices.Clip(r.pos[:r.n])) == len(pos)", "test llama2_7b", 0},
	{"go: rope table sin sign", "generated/llama2_7b/llama2_7b.go", "",
		"row[nFreq+i] = float32(a * s)", "row[nFreq+i] = float32(a * -s)", "test llama2_7b", 0},
	{"go: packed QKV key heads dropped", "generated/llama2_7b/llama2_7b.go", "",
		"operand{qkv, qkv, qHeads + kHeads, stride, HeadDim}", "operand{qkv, qkv, qHeads, stride, HeadDim}", "test llama2_7b", 0},
	{"go: alibi shifted bias sign", "generated/bloom_7b1/bloom_7b1.go", "",
		"e[j] = float32(-s * (n - float64(j)))", "e[j] = float32(-s * (n + float64(j)))", "test bloom_7b1", 0},
	{"go: rpe_bias distance sign", "generated/t5_base/t5_base.go", "",
		"d[m] = row[Bucket(top-m)]", "d[m] = row[Bucket(m-top)]", "test t5_base", 0},
	{"go: alibi position form head offset", "generated/bloom_7b1/bloom_7b1.go", "",
		"k.softmaxRamp(row[:valid], scale, float32(-slopes[h0+t]), float32(t0))", "k.softmaxRamp(row[:valid], scale, float32(-slopes[t]), float32(t0))", "test bloom_7b1", 0},
	{"go: sinusoidal sin sign", "generated/transformer_base/transformer_base.go", "",
		"dst[2*i] = float32(s)", "dst[2*i] = float32(-s)", "test transformer_base", 0},
	{"go: rpe_full key split off by one", "generated/shaw2018_base/shaw2018_base.go", "",
		"top = max(p-BucketSpan+1, 0)", "top = max(p-BucketSpan, 0)", "test shaw2018_base", 0},
	{"go: xl u replaced by v", "generated/transformer_xl_base/transformer_xl_base.go", "",
		"qu[x], qv[x] = qx+u[x], qx+v[x]", "qu[x], qv[x] = qx+v[x], qx+v[x]", "test transformer_xl_base", 0},

	// amd64 assembly.
	{"avx2: rope grouped Apply sign", "generated/llama2_7b/llama2_7b_amd64.s", "rope_token5:",
		"VFMSUB231PS", "VFMADD231PS", "test llama2_7b", 0},
	{"avx2: rope grouped Inverse sign", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·rotateAVX2(SB) >> \nrope_inverse",
		"VFMADD231PS", "VFMSUB231PS", "test llama2_7b", 0},
	{"avx2: rope large-call Apply sign", "generated/llama2_7b/llama2_7b_amd64.s", "rope_stream3:",
		"VFMSUB231PS", "VFMADD231PS", "test llama2_7b", 0},
	{"avx2: rope large-call Inverse sign", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·rotateAVX2(SB) >> \nrope_inverse >> \nrope_stream",
		"VFMADD231PS", "VFMSUB231PS", "test llama2_7b", 0},
	{"avx2: rope large-call cos from the row", "generated/llama2_7b/llama2_7b_amd64.s", "rope_stream3:",
		"VFMSUB231PS 192(R8), Y10, Y12", "VFMSUB231PS 196(R8), Y10, Y12", "test llama2_7b", 0},
	{"avx2: rope interleaved large-call permute", "generated/gptj_6b/gptj_6b_amd64.s", "rope_stream3:",
		"$0xb1", "$0x4e", "test gptj_6b", 0},
	{"amd64: bf16 narrowing constant (round half up)", "internal/goldens/grope_bf16_half/grope_bf16_half_amd64.s", "",
		"DATA c32x8_00007fff<>+0(SB)/4, $0x00007fff", "DATA c32x8_00007fff<>+0(SB)/4, $0x00008000", "golden grope_bf16_half", 0},
	{"avx2: bf16 narrowing without the bit-16 tie correction (ties down)", "internal/goldens/grope_bf16_half/grope_bf16_half_amd64.s", "TEXT ·rotateAVX2(SB)",
		"VPSUBD         Y10, Y12, Y12", "VPOR           Y10, Y10, Y10", "golden grope_bf16_half", 0},
	{"avx2: bf16 narrowing joins lane 0 twice", "internal/goldens/grope_bf16_half/grope_bf16_half_amd64.s", "TEXT ·rotateAVX2(SB)",
		"VPERMQ         $0x08, Y12, Y12", "VPERMQ         $0x00, Y12, Y12", "golden grope_bf16_half", 0},
	{"avx2: bf16 widening takes the wrong word", "internal/goldens/grope_bf16_half/grope_bf16_half_amd64.s", "",
		"DATA bf16widen<>+2(SB)/1, $0x00", "DATA bf16widen<>+2(SB)/1, $0x02", "golden grope_bf16_half", 0},
	{"avx512: scaleRows16 f16 narrowing truncates", "internal/goldens/grope_temp_f16/grope_temp_f16_amd64.s", "TEXT ·scaleRowsAVX512(SB)",
		"VCVTPS2PH $0x00, Z1, (DI)", "VCVTPS2PH $0x03, Z1, (DI)", "golden grope_temp_f16", 0},
	{"avx512: scaleRows16 bf16 rounding bias 1 (not 0x7fff)", "internal/goldens/grope_llama4_bf16/grope_llama4_bf16_amd64.s", "TEXT ·scaleRowsAVX512(SB)",
		"VPADDD.BCST c32_00007fff<>+0(SB), Z2, Z2", "VPADDD.BCST c32_00000001<>+0(SB), Z2, Z2", "golden grope_llama4_bf16", 0},
	{"avx2: f16 narrowing truncates", "internal/goldens/grope_f16_half/grope_f16_half_amd64.s", "TEXT ·rotateAVX2(SB)",
		"VCVTPS2PH   $0x00, Y12, (R10)", "VCVTPS2PH   $0x03, Y12, (R10)", "golden grope_f16_half", 0},
	{"avx512: rope Apply sign", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·rotateAVX512(SB)",
		"VFMSUB231PS", "VFMADD231PS", "test llama2_7b", 0},
	{"avx512: rope Inverse sign", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·rotateAVX512(SB) >> \nrope_inverse",
		"VFMADD231PS", "VFMSUB231PS", "test llama2_7b", 0},
	{"avx512: rope large-call Apply sign", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·rotateAVX512(SB) >> \nrope_stream",
		"VFMSUB231PS", "VFMADD231PS", "test llama2_7b", 0},
	{"avx512: rope combineRows sub→add", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·combineRowsAVX512(SB)",
		"VSUBPD       Z3, Z2, Z2", "VADDPD       Z3, Z2, Z2", "test llama2_7b", 0},
	{"avx2: rope hiRow second product (m·c) sub→add", "generated/llama2_7b/llama2_7b_amd64.s", "TEXT ·hiRowAVX2(SB)",
		"VSUBPD  Y5, Y3, Y3", "VADDPD  Y5, Y3, Y3", "test llama2_7b", 0},
	{"avx2: alibi addRow add→sub", "generated/bloom_7b1/bloom_7b1_amd64.s", "TEXT ·addRowAVX2(SB)",
		"VADDPS  (CX), Y0, Y0", "VSUBPS  (CX), Y0, Y0", "test bloom_7b1", 0},
	{"avx2: softmax exp ln2 low part (C2) constant", "generated/bloom_7b1/bloom_7b1_amd64.s", "",
		"DATA c32x8_b95e8083<>+0(SB)/4, $0xb95e8083", "DATA c32x8_b95e8083<>+0(SB)/4, $0xb96e8083", "test bloom_7b1", 0},
	{"avx2: softmax exp interleaved pair: second vector's polynomial reads the first's r", "generated/bloom_7b1/bloom_7b1_amd64.s", "TEXT ·softmaxRowAVX2(SB)",
		"VFMADD213PS  c32x8_3d2aac79<>+0(SB), Y9, Y13", "VFMADD213PS  c32x8_3d2aac79<>+0(SB), Y2, Y13", "test bloom_7b1", 0},
	{"alibi: the decode row loop lets its row-position closure escape (allocates per call)", "generated/bloom_7b1/bloom_7b1.go", "func addRampRows(",
		"\tk := active\n", "\tgo func() { _ = rel }()\n\tk := active\n", "allocs bloom_7b1", 0},
	{"alibi: causal Softmax's whole-vector tail without the −Inf bias (maskFuture writes 0)", "generated/bloom_7b1/bloom_7b1.go", "func maskFuture(",
		"d[m] = negInf", "d[m] = 0", "test bloom_7b1", 0},
	{"avx512: alibi addRow add→sub", "generated/bloom_7b1/bloom_7b1_amd64.s", "TEXT ·addRowAVX512(SB)",
		"VADDPS  64(CX), Z0, Z0", "VSUBPS  64(CX), Z0, Z0", "test bloom_7b1", 0},
	{"avx2: alibi decode addRamp t0+j", "generated/bloom_7b1/bloom_7b1_amd64.s", "TEXT ·addRampAVX2(SB)",
		"VSUBPD       iota64x4<>+0(SB), Y1, Y1", "VADDPD       iota64x4<>+0(SB), Y1, Y1", "test bloom_7b1", 0},
	{"avx512: alibi decode addRamp t0+j", "generated/bloom_7b1/bloom_7b1_amd64.s", "TEXT ·addRampAVX512(SB)",
		"VSUBPD       iota64x8<>+0(SB), Z1, Z1", "VADDPD       iota64x8<>+0(SB), Z1, Z1", "test bloom_7b1", 0},
	{"avx512: sinusoidal addRows add→sub", "generated/transformer_base/transformer_base_amd64.s", "TEXT ·addRowsAVX512(SB)",
		"VADDPS  (SI), Z0, Z0", "VSUBPS  (SI), Z0, Z0", "test transformer_base", 0},
	{"avx512: rpe_full dotRows wrong q register", "generated/shaw2018_base/shaw2018_base_amd64.s", "TEXT ·dotRowsAVX512(SB)",
		"VMULPS      512(BX), Z0, Z5", "VMULPS      512(BX), Z1, Z5", "test shaw2018_base", 0},
	{"avx2: rpe_full axpyRows add→sub", "generated/shaw2018_base/shaw2018_base_amd64.s", "TEXT ·axpyRowsAVX2(SB)",
		"VFMADD231PS  (DX), Y8, Y0", "VFNMADD231PS (DX), Y8, Y0", "test shaw2018_base", 0},
	{"avx2: xl scoresRow r offset", "generated/transformer_xl_base/transformer_xl_base_amd64.s", "TEXT ·scoresRowAVX2(SB)",
		"VFMADD231PS 544(BX), Y1, Y7", "VFMADD231PS 548(BX), Y1, Y7", "test transformer_xl_base", 0},

	// arm64 assembly, run under qemu.
	{"neon: rope Apply FMLS→FMLA", "generated/llama2_7b/llama2_7b_arm64.s", "token3:",
		"VFMLS V4.S4, V12.S4, V16.S4", "VFMLA V4.S4, V12.S4, V16.S4", "neon llama2_7b", 0},
	{"neon: rope Inverse FMLA→FMLS", "generated/llama2_7b/llama2_7b_arm64.s", "inverse2:",
		"VFMLA V4.S4, V12.S4, V16.S4", "VFMLS V4.S4, V12.S4, V16.S4", "neon llama2_7b", 0},
	{"neon: rope FMUL encoding reads V1", "generated/llama2_7b/llama2_7b_arm64.s", "token3:",
		"WORD $0x6e20dd10", "WORD $0x6e21dd10", "neon llama2_7b", 0},
	{"neon: rope interleaved FMUL encoding", "generated/gptj_6b/gptj_6b_arm64.s", "token3:",
		"WORD $0x6e20dd52", "WORD $0x6e21dd52", "neon gptj_6b", 0},
	{"neon: rope combineRows FSUB→FADD encoding", "generated/llama2_7b/llama2_7b_arm64.s", "TEXT ·combineRowsNEON(SB)",
		"WORD $0x4ef2d610", "WORD $0x4e72d610", "neon llama2_7b", 0},
	{"neon: rope hiRow m·c multiplies cs by mc where ms belongs (FMUL Rn V18→V16)", "generated/llama2_7b/llama2_7b_arm64.s", "TEXT ·hiRowNEON(SB)",
		"WORD $0x6e6ade54", "WORD $0x6e6ade14", "neon llama2_7b", 0},
	{"neon: bf16 narrowing without RADDHN's 2^15 (ADDHN)", "internal/goldens/grope_bf16_half/grope_bf16_half_arm64.s", "qinplace5:",
		"WORD $0x2e684210", "WORD $0x0e684210", "neon golden grope_bf16_half", 0},
	{"neon: bf16 narrowing ties on bit 15 (round half up)", "internal/goldens/grope_bf16_half/grope_bf16_half_arm64.s", "qinplace5:",
		"VSHL $15, V16.S4, V8.S4", "VSHL $16, V16.S4, V8.S4", "neon golden grope_bf16_half", 0},
	{"neon: f16 narrowing encoded as FCVTN 2D→2S (sz set)", "internal/goldens/grope_f16_half/grope_f16_half_arm64.s", "qinplace5:",
		"WORD $0x0e216a10", "WORD $0x0e616a10", "neon golden grope_f16_half", 0},
	{"neon: scaleRows16 f16 FMUL encoding squares V1 (Rm V1, not the factor V31)", "internal/goldens/grope_temp_f16/grope_temp_f16_arm64.s", "TEXT ·scaleRowsNEON(SB)",
		"WORD $0x6e3fdc21", "WORD $0x6e21dc21", "neon golden grope_temp_f16", 0},
	{"neon: scaleRows16 f16 one-value tail narrowed as FCVTN 2D→2S (sz set)", "internal/goldens/grope_temp_f16/grope_temp_f16_arm64.s", "scale16_x1_8:",
		"WORD $0x0e216800", "WORD $0x0e616800", "neon golden grope_temp_f16", 0},
	{"neon: scaleRows16 bf16 narrowing without RADDHN's 2^15 (ADDHN)", "internal/goldens/grope_llama4_bf16/grope_llama4_bf16_arm64.s", "TEXT ·scaleRowsNEON(SB)",
		"WORD $0x2e644000", "WORD $0x0e644000", "neon golden grope_llama4_bf16", 0},
	{"avx: scaleRows16 bf16 NaN factor keeps bit 15 of its low half", "asm/rope/scalerows16.go", "",
		"c.VANDPS(g.Broadcast(0xffff0000), clean, clean)", "c.VANDPS(g.Broadcast(0xffff8000), clean, clean)", "asm/rope scaleRows16 amd64", 0},
	{"neon: scaleRows16 bf16 NaN factor keeps bit 15 of its low half", "asm/rope/neon_scalerows16.go", "",
		"e.AndImmW(arm64.R7, arm64.R7, 0xffff0000)", "e.AndImmW(arm64.R7, arm64.R7, 0xffff8000)", "qemu asm/rope scaleRows16", 0},
	{"neon: softmax exp ln2 constant", "generated/bloom_7b1/bloom_7b1_arm64.s", "TEXT ·softmaxRowNEON(SB)",
		"MOVD $0x3f318000, R9", "MOVD $0x3f328000, R9", "neon bloom_7b1", 0},
	{"neon: decode softmax ramp exp ln2 constant", "generated/bloom_7b1/bloom_7b1_arm64.s", "TEXT ·softmaxRampNEON(SB)",
		"MOVD $0x3f318000, R9", "MOVD $0x3f328000, R9", "neon bloom_7b1", 0},
	{"neon: softmax exp skip threshold −88→−5", "generated/bloom_7b1/bloom_7b1_arm64.s", "precise7:\n\tMOVD R8, R0\n\tMOVD R10, R1",
		"MOVD $3266314240, R11", "MOVD $3231711232, R11", "neon bloom_7b1", 0},
	{"neon: alibi decode addRamp step FSUB→FADD encoding", "generated/bloom_7b1/bloom_7b1_arm64.s", "TEXT ·addRampNEON(SB)",
		"WORD $0x4ef5d631", "WORD $0x4e75d631", "neon bloom_7b1", 0},
	{"neon: sinusoidal FADD→FSUB encoding", "generated/transformer_base/transformer_base_arm64.s", "TEXT ·addRowsNEON(SB)",
		"WORD $0x4e24d400", "WORD $0x4ea4d400", "neon transformer_base", 0},
	{"neon: rpe_full dotRows FMLA→FMLS", "generated/shaw2018_base/shaw2018_base_arm64.s", "TEXT ·dotRowsNEON(SB)",
		"VFMLA V8.S4, V21.S4, V0.S4", "VFMLS V8.S4, V21.S4, V0.S4", "neon shaw2018_base", 0},
	{"neon: xl scoresRow FMLA→FMLS", "generated/transformer_xl_base/transformer_xl_base_arm64.s", "TEXT ·scoresRowNEON(SB)",
		"VFMLA V9.S4, V22.S4, V4.S4", "VFMLS V9.S4, V22.S4, V4.S4", "neon transformer_xl_base", 0},

	// CUDA templates, run by posenc verify through host emulation.
	{"cuda: rope Inverse sign dropped (f32)", "templates/rope.cu.tmpl", "",
		"s_s[i] = sign * (attn * s);", "s_s[i] = attn * s;", "verify cuda llama2_7b", 0},
	{"cuda: sinusoidal angle p+1", "templates/absolute.cu.tmpl", "",
		"sincos_angle((double)p / divisors[i], &s, &c);", "sincos_angle((double)(p + 1) / divisors[i], &s, &c);", "verify cuda transformer_base", 0},
	{"cuda: rope Inverse sign dropped (bf16)", "templates/rope.cu.tmpl", "",
		"s_s[i] = sign * (attn * s);", "s_s[i] = attn * s;", "verify cuda rope_il_bf16", 0},
	{"cuda: rope interleaved odd sign (bf16)", "templates/rope.cu.tmpl", "",
		"v[2 * j + 1] = fmaf(x1, c, x0 * s);", "v[2 * j + 1] = fmaf(x1, c, -(x0 * s));", "verify cuda rope_il_bf16", 0},
	{"cuda: scale_q factor dropped (bf16)", "templates/temperature.cu.tmpl", "",
		"st(x + j, ld(x + j) * s);", "st(x + j, ld(x + j));", "verify cuda temp_mrope_bf16", 0},
	{"cuda: mrope pair axis ignored (bf16)", "templates/rope.cu.tmpl", "",
		"pos[(size_t)t * axes + pos_axis(i, axes)]", "pos[(size_t)t * axes]", "verify cuda temp_mrope_bf16", 0},
	{"cuda: rpe_bias AddBias sign (f16)", "templates/bias.cu.tmpl", "",
		"st(row + j, j < nv ? ld(row + j) + b :", "st(row + j, j < nv ? ld(row + j) - b :", "verify cuda rpe_f16", 0},
	{"cuda: xl u replaced by v (bf16)", "templates/relative.cu.tmpl", "",
		"s_qu[x] = qx + ld(u + x);", "s_qu[x] = qx + ld(v + x);", "verify cuda xl_bf16", 0},
	// The generator.
	{"gen: llama3 low-frequency rule", "gen/rope/scaling.go", "",
		"f[i] = w / sc.Factor", "f[i] = w * sc.Factor", "verify go llama31_8b", 0},
	{"gen: rope chunk cache promotes any spare", "gen/rope/chunkcache.go", "",
		`jen.If(id("s").Op("!=").Nil().Op("&&").Id("s").Dot("holds").Call(id("pos"))).Block(`, `jen.If(id("s").Op("!=").Nil()).Block(`, "verify go llama31_8b", 0},
	{"gen: alibi slopes of non-power-of-two heads", "gen/bias/consts.go", "",
		"for i := 0; len(sl) < n; i += 2 {", "for i := 1; len(sl) < n; i += 2 {", "verify go bloom_176b", 0},
	{"gen: t5 bidirectional bucket of distance 0", "gen/bias/consts.go", "",
		"if relativePosition > 0 {", "if relativePosition >= 0 {", "verify go t5_base", 0},
	{"gen: sinusoidal divisor exponent", "gen/absolute/consts.go", "",
		"exactmath.Pow(base, float64(2*i)/float64(d))", "exactmath.Pow(base, float64(2*i+1)/float64(d))", "verify go transformer_base", 0},
	{"asm gen: avx2 large-call Inverse", "asm/rope/amd64.go", "",
		"g.rotatePiece(sh, pc, pd, ps, cop, sop, inv)", "g.rotatePiece(sh, pc, pd, ps, cop, sop, !inv)", "verify avx2", 0},
	{"asm gen: neon k heads sign", "asm/rope/neon.go", "",
		`g.heads("k", arm64.R2, arm64.R2, arm64.R3, arm64.R24, false, false)`, `g.heads("k", arm64.R2, arm64.R2, arm64.R3, arm64.R24, true, false)`, "verify neon", 0},
}
