// Package abi declares the kernel ABI of posenc's generated packages once:
// for every assembly kernel, the field of the generated kernels struct it
// fills, its parameters and what it computes. The avo (amd64) and NEON
// (arm64) generators and their Go declaration writers derive from these
// values the Go signature, the kernels-struct func type and the argument
// frame layout, instead of spelling them again.
package abi

import "strings"

// Param is one parameter of a kernel: its name and Go type.
type Param struct {
	Name string // Go parameter name, also the asmdecl name of its frame slots
	Type string // Go type: "[]float32", "[]float64", "[]int32", "int", "float64" or "float32"
}

// Kernel is one assembly kernel of the ABI.
type Kernel struct {
	// Field is the kernels-struct field the kernel fills; the generators
	// name its symbols Field+suffix (rotateAVX2, rotateNEON).
	Field string
	// Params are the kernel's parameters, in order. Kernels return nothing.
	Params []Param
	// Doc says what the kernel computes.
	Doc string
	// Spelled keeps a type on every parameter in Signature (no grouping of
	// consecutive parameters of one type), the spelling the declarations of
	// this kernel have always had.
	Spelled bool
	// TestOnly marks a kernel that tests call directly; it is not a
	// kernels-struct field and is never registered.
	TestOnly bool
}

// Signature returns the parameter list as Go source, e.g.
// "(dst, src []float32)": consecutive parameters of one type share it
// unless k.Spelled.
func (k Kernel) Signature() string {
	var b strings.Builder
	b.WriteByte('(')
	for i, p := range k.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Name)
		if k.Spelled || i == len(k.Params)-1 || k.Params[i+1].Type != p.Type {
			b.WriteString(" " + p.Type)
		}
	}
	b.WriteByte(')')
	return b.String()
}

// FuncType returns the Go func type of the kernel, the type of its
// kernels-struct field and the expression avo's SignatureExpr parses, e.g.
// "func(dst, src []float32)".
func (k Kernel) FuncType() string { return "func" + k.Signature() }

// The kernels, one value each. Two kernels share the field scoresRow: the
// rpe_full one and the xl one, which have different signatures.
var (
	// Rotate is the rope kernel (RoFormer, Su et al. 2021): per token t it
	// rotates the first RotaryDim dims of every q head and then every k head
	// by table row idx[t]; sign −1 applies the inverse rotation of q in
	// place only (q = qSrc and kHeads = 0: Inverse and InverseMRoPE, the
	// only callers with sign −1, rotate one tensor in place). k is always
	// rotated in place (k = kSrc: ApplyQK and ApplyQKMRoPE are its only
	// callers), and the assembly has no loop for the other cases, which no
	// public function reaches. Head h of
	// token t starts at float t·qStride + h·qHeadStride of qSrc, is read
	// there and written at the same offset of q (the destination); q and
	// qSrc are the same slice (in place) or do not overlap, and when they
	// differ dims RotaryDim..HeadDim are copied. One strided kernel serves
	// the contiguous [token][head][dim] layout (qStride = qHeads·HeadDim,
	// qHeadStride = HeadDim), vLLM's packed QKV rows (qStride =
	// (qHeads+2·kvHeads)·HeadDim) and head-major [head][token][dim] tensors
	// (qStride = HeadDim). The same holds for k.
	Rotate = Kernel{Field: "rotate", Params: []Param{
		{"q", "[]float32"}, {"qSrc", "[]float32"}, {"qHeads", "int"}, {"qStride", "int"}, {"qHeadStride", "int"},
		{"k", "[]float32"}, {"kSrc", "[]float32"}, {"kHeads", "int"}, {"kStride", "int"}, {"kHeadStride", "int"},
		{"table", "[]float32"}, {"idx", "[]int32"}, {"sign", "float32"},
	}, Doc: "rotates the rotary dims of every q and k head (strided, q read from qSrc and written to q, k in place) by the table rows idx selects (sign −1: inverse of q in place, no k)"}

	// Rotate16 is Rotate over 16-bit storage (a spec's dtype f16 or bf16):
	// q, qSrc, k and kSrc hold the raw encodings (IEEE 754 binary16 or
	// bfloat16), strides count elements; each value is widened to float32,
	// rotated with the float32 table row and narrowed back with round to
	// nearest, ties to even. Dims RotaryDim..HeadDim are copied bit for bit
	// from a separate source.
	Rotate16 = Kernel{Field: "rotate", Params: []Param{
		{"q", "[]uint16"}, {"qSrc", "[]uint16"}, {"qHeads", "int"}, {"qStride", "int"}, {"qHeadStride", "int"},
		{"k", "[]uint16"}, {"kSrc", "[]uint16"}, {"kHeads", "int"}, {"kStride", "int"}, {"kHeadStride", "int"},
		{"table", "[]float32"}, {"idx", "[]int32"}, {"sign", "float32"},
	}, Doc: "rotates the rotary dims of every q and k head stored as 16-bit floats (widened to float32, narrowed to nearest even) by the table rows idx selects (q read from qSrc, k in place; sign −1: inverse of q in place, no k)"}

	// AddRow adds src to dst element-wise: dst[j] += src[j] (alibi and
	// rpe_bias: adding a bias row to a score row).
	AddRow = Kernel{Field: "addRow", Params: []Param{{"dst", "[]float32"}, {"src", "[]float32"}},
		Doc: "dst[j] += src[j] for j < len(dst); len(src) == len(dst)"}

	// SoftmaxRow replaces row by softmax(scale·row + bias) (alibi and
	// rpe_bias).
	SoftmaxRow = Kernel{Field: "softmaxRow", Params: []Param{{"row", "[]float32"}, {"bias", "[]float32"}, {"scale", "float32"}},
		Doc: "row[j] = softmax_j(scale·row[j] + bias[j]); len(bias) == len(row) ≥ 1"}

	// SoftmaxRamp is SoftmaxRow with the ALiBi bias (Press et al. 2022)
	// computed in the kernel instead of read from memory:
	// bias[j] = nslope·|t0 − j|, nslope = −slope_h, t0 the query position
	// counted from key 0 (alibi only).
	SoftmaxRamp = Kernel{Field: "softmaxRamp", Params: []Param{{"row", "[]float32"}, {"scale", "float32"}, {"nslope", "float32"}, {"t0", "float32"}},
		Doc: "row[j] = softmax_j(scale·row[j] + nslope·|t0 − j|); len(row) ≥ 1, t0 and len(row) < 2^24"}

	// AddRamp adds the ALiBi bias (Press et al. 2022) of one score row,
	// computed in the kernel instead of read from a table: the bias of key j
	// is float32(nslope·|t0 − j|) formed in float64 (t0 − j exact, one
	// rounding of the product to float64, one to float32), bit for bit the
	// float32 table entry the alibi wrapper's fillD would write. The
	// decode path of AddBias and Bias (after a clear) (alibi only).
	AddRamp = Kernel{Field: "addRamp", Params: []Param{{"dst", "[]float32"}, {"nslope", "float64"}, {"t0", "float64"}},
		Doc: "dst[j] += float32(nslope·|t0 − j|), the product in float64; |t0| and len(dst) < 2^52"}

	// AddRows adds table row idx[t] to token t of x (the absolute
	// encodings: sinusoidal, learned, algebraic, binary).
	AddRows = Kernel{Field: "addRows", Spelled: true, Params: []Param{{"x", "[]float32"}, {"table", "[]float32"}, {"idx", "[]int32"}},
		Doc: "x[t·D+i] += table[idx[t]·D+i] with D = DModel"}

	// AddRows64 adds float64 table row idx[t] to float32 token t of x with
	// one rounding, x = float32(float64(x) + row): the algebraic encoding,
	// whose PE needs more than float32 precision when x ≈ −PE cancels it.
	AddRows64 = Kernel{Field: "addRows64", Spelled: true, Params: []Param{{"x", "[]float32"}, {"table", "[]float64"}, {"idx", "[]int32"}},
		Doc: "x[t·D+i] = float32(float64(x[t·D+i]) + table[idx[t]·D+i]) with D = DModel"}

	// DotRows is rpe_full's dst[r] = x·rows[r] (Shaw et al. 2018).
	DotRows = Kernel{Field: "dotRows", Params: []Param{{"dst", "[]float32"}, {"x", "[]float32"}, {"rows", "[]float32"}},
		Doc: "dst[r] = x·rows[r] for r < len(dst), rows HeadDim floats apart"}

	// ScoresRow is rpe_full's dst[j] = (q·k_j + bias[j])·scale.
	ScoresRow = Kernel{Field: "scoresRow", Params: []Param{
		{"dst", "[]float32"}, {"q", "[]float32"}, {"k", "[]float32"}, {"bias", "[]float32"}, {"scale", "float32"},
	}, Doc: "dst[j] = (q·k_j + bias[j])·scale for j < len(dst)"}

	// XLScoresRow is Transformer-XL's scoresRow (Dai et al. 2019):
	// dst[j] = qu·k_j + qv·r_j, with qu = q + u and qv = q + v.
	XLScoresRow = Kernel{Field: "scoresRow", Params: []Param{
		{"dst", "[]float32"}, {"qu", "[]float32"}, {"k", "[]float32"}, {"qv", "[]float32"}, {"r", "[]float32"},
	}, Doc: "dst[j] = qu·k_j + qv·r_j for j < len(dst)"}

	// AxpyRows is rpe_full's dst += Σ_r w[r]·rows[r].
	AxpyRows = Kernel{Field: "axpyRows", Params: []Param{{"dst", "[]float32"}, {"w", "[]float32"}, {"rows", "[]float32"}},
		Doc: "dst[x] += Σ_r w[r]·rows[r·HeadDim+x] for r < len(w)"}

	// ScaleRows multiplies row t of x by scales[t]: rope's ScaleQ, Llama 4's
	// query temperature (transformers modeling_llama4.py,
	// Llama4TextAttention: query_states * attn_scales, one factor per token),
	// with rowLen = heads·HeadDim.
	ScaleRows = Kernel{Field: "scaleRows", Params: []Param{{"x", "[]float32"}, {"scales", "[]float32"}, {"rowLen", "int"}},
		Doc: "x[t·rowLen+j] *= scales[t] for t < len(scales), j < rowLen; len(x) ≥ len(scales)·rowLen"}

	// FarRows computes the rope table rows of positions outside the table
	// (rope's exact path) from four float32 digit tables in one pass:
	// digits holds 4 tables of 256 rows of 2·nFreq float32 (cos at [i], sin
	// at [nFreq+i]), row d of table k at (k·256 + d)·2·nFreq. Per token t,
	// with p = pos[t] as 32 bits and d_k = byte k of p (table 3's rows are
	// signed digits and carry A), per pair i the complex products
	// m = D3·D2, h = m·D1, r = h·D0, each x·y = (xc·yc − xs·ys,
	// xs·yc + xc·ys) in float32 with every product, difference and sum
	// rounded once (no FMA), r stored into row t (rowLen floats): the half
	// layout stores c at [i] and s at [nFreq+i], the interleaved one c at
	// [2i], [2i+1] and s at [RotaryDim+2i], [RotaryDim+2i+1]. Every int32 p
	// indexes inside the tables.
	FarRows = Kernel{Field: "farRows", Params: []Param{{"rows", "[]float32"}, {"digits", "[]float32"}, {"pos", "[]int32"}},
		Doc: "rows[t] = ((D3·D2)·D1)·D0 per pair, the four digit rows of byte k of pos[t] in digits, unfused float32, in the table-row layout"}
	// ScaleRows16 is ScaleRows over 16-bit storage (a spec's dtype f16 or
	// bf16): each value of x (raw binary16 or bfloat16 bits) is widened to
	// float32, multiplied by scales[t] and narrowed back with round to
	// nearest, ties to even, as Rotate16 narrows.
	ScaleRows16 = Kernel{Field: "scaleRows", Params: []Param{{"x", "[]uint16"}, {"scales", "[]float32"}, {"rowLen", "int"}},
		Doc: "x[t·rowLen+j] = narrow(widen(x[t·rowLen+j])·scales[t]) for t < len(scales), j < rowLen, the 16-bit values rounded to nearest even; len(x) ≥ len(scales)·rowLen"}

	// ScoresKV is the attention form's score kernel over keys in their
	// [key][KVHead][HeadDim] rows (gen/attention): a block of nb queries ×
	// groups KV groups × grp query heads, rows r = (b·groups + gi)·grp + hh
	// of q (HeadDim floats apart), and nk keys kStride floats apart; row r
	// meets KV head gi of each key, at k[j·kStride + gi·HeadDim:].
	ScoresKV = Kernel{Field: "scoresKV", Params: []Param{
		{"s", "[]float32"}, {"q", "[]float32"}, {"k", "[]float32"},
		{"nk", "int"}, {"nb", "int"}, {"groups", "int"}, {"grp", "int"}, {"kStride", "int"}, {"sStride", "int"},
	}, Doc: "s[r·sStride + j] = q[r·HeadDim:]·k[j·kStride + gi(r)·HeadDim:] for j < nk, r < nb·groups·grp, gi(r) = r/grp mod groups"}
	// ValuesKV is the attention form's output kernel, the transpose of
	// ScoresKV: row r of acc is first rescaled by alpha[r] (the online
	// softmax's e^(m − m') when the row's maximum grew; 1 otherwise), then
	// gains p[r·pStride + j]·v_j for each key j whose weight is not +0 (a
	// zero weight never meets the row, so a padding key's NaN stays out).
	ValuesKV = Kernel{Field: "valuesKV", Params: []Param{
		{"acc", "[]float32"}, {"p", "[]float32"}, {"v", "[]float32"}, {"alpha", "[]float32"},
		{"nk", "int"}, {"nb", "int"}, {"groups", "int"}, {"grp", "int"}, {"vStride", "int"}, {"pStride", "int"},
	}, Doc: "acc[r·HeadDim + x] = alpha[r]·acc[r·HeadDim + x] + Σ p[r·pStride + j]·v[j·vStride + gi(r)·HeadDim + x] over j < nk with p ≠ +0, r < nb·groups·grp, x < HeadDim"}

	// ScoresKV16 is ScoresKV over keys stored as 16-bit floats (a rope
	// spec's dtype f16 or bf16, raw encodings; kStride counts elements),
	// each widened exactly to float32 as it is loaded: a decode step reads
	// the 16-bit cache where it is.
	ScoresKV16 = Kernel{Field: "scoresKV16", Params: []Param{
		{"s", "[]float32"}, {"q", "[]float32"}, {"k", "[]uint16"},
		{"nk", "int"}, {"nb", "int"}, {"groups", "int"}, {"grp", "int"}, {"kStride", "int"}, {"sStride", "int"},
	}, Doc: "s[r·sStride + j] = q[r·HeadDim:]·widen(k[j·kStride + gi(r)·HeadDim:]) for j < nk, r < nb·groups·grp, gi(r) = r/grp mod groups"}
	// ValuesKV16 is ValuesKV over values stored as 16-bit floats, widened
	// as they are loaded. Both ScoresKV16 and ValuesKV16 index q and acc in
	// the pair order of PairOrder16 when the variant has that kernel.
	ValuesKV16 = Kernel{Field: "valuesKV16", Params: []Param{
		{"acc", "[]float32"}, {"p", "[]float32"}, {"v", "[]uint16"}, {"alpha", "[]float32"},
		{"nk", "int"}, {"nb", "int"}, {"groups", "int"}, {"grp", "int"}, {"vStride", "int"}, {"pStride", "int"},
	}, Doc: "acc[r·HeadDim + x] = alpha[r]·acc[r·HeadDim + x] + Σ p[r·pStride + j]·widen(v[j·vStride + gi(r)·HeadDim + x]) over j < nk with p ≠ +0"}

	// PairOrder16 is the order a variant's ScoresKV16 reads q in and its
	// ValuesKV16 keeps acc in, for bf16 storage, where it registers this
	// kernel (AVX-512): within each row of HeadDim floats, each whole block
	// of 32 holds its 16 even-indexed elements, then its 16 odd ones; the
	// elements after the last whole block keep their places. A 64-byte load
	// of 32 bf16 values then widens into the even elements with one shift
	// (VPSLLD $16) and into the odd ones with one masked load (the odd
	// words), where the natural order takes a word-to-dword extension and a
	// shift for every 16. The engine puts q into this order before a decode
	// block's ScoresKV16 calls and acc back after its last ValuesKV16 call;
	// a variant without the kernel keeps the natural order.
	PairOrder16 = Kernel{Field: "pairOrder16", Params: []Param{{"x", "[]float32"}, {"inverse", "int"}},
		Doc: "inverse = 0: each whole block of 32 floats of each HeadDim row of x becomes its 16 even-indexed then its 16 odd-indexed elements; inverse ≠ 0 undoes it; len(x) a multiple of HeadDim"}

	// Widen16 is the attention form's conversion of 16-bit storage (a rope
	// spec's dtype f16 or bf16) to the float32 its kernels compute in: each
	// raw encoding of src widened exactly (IEEE 754 binary16 or bfloat16; a
	// signaling f16 NaN may come out quiet).
	// The engine widens a tile of keys or values into scratch once and the
	// float32 kernels (ScoresKV, ValuesKV) read it there.
	Widen16 = Kernel{Field: "widenRow", Params: []Param{{"dst", "[]float32"}, {"src", "[]uint16"}},
		Doc: "dst[j] = widen(src[j]) for j < len(src), exactly; len(dst) ≥ len(src)"}

	// ExpShift is the attention form's probability step (gen/attention):
	// each score of a row becomes e^(s − m), m the row's running maximum, with
	// softmaxRow's vector expf (e^−∞ = +0 exactly), and sum[0] gets their sum.
	ExpShift = Kernel{Field: "expShift", Params: []Param{{"row", "[]float32"}, {"m", "float32"}, {"sum", "[]float32"}},
		Doc: "row[j] = e^(row[j] − m) for j < len(row), sum[0] = Σ_j row[j]; len(sum) ≥ 1"}

	// ScoresKVRope is ScoresKV over unrotated keys (rope's Attention, a
	// decode block of every KV head): each key's head rows are first rotated
	// by table row idx[j] (rows of RowLen floats, A·cos then A·sin of the
	// RotaryDim/2 frequencies; half layout: dims i and i + RotaryDim/2
	// paired, dims from RotaryDim on unrotated) into rot, scratch of
	// 4·HeadDim floats, then dotted as ScoresKV does; k is only read.
	ScoresKVRope = Kernel{Field: "scoresKVRope", Params: []Param{
		{"s", "[]float32"}, {"q", "[]float32"}, {"k", "[]float32"}, {"table", "[]float32"}, {"idx", "[]int32"}, {"rot", "[]float32"},
		{"nk", "int"}, {"nb", "int"}, {"groups", "int"}, {"grp", "int"}, {"kStride", "int"}, {"sStride", "int"},
	}, Doc: "s[r·sStride + j] = q[r·HeadDim:]·rope(k[j·kStride + gi(r)·HeadDim:], table row idx[j]) for j < nk; rot is scratch of 4·HeadDim floats"}

	// ScoresKVRope16 is ScoresKVRope over keys stored as 16-bit floats (a
	// rope spec's dtype f16 or bf16; kStride counts elements): each key
	// piece is widened, rotated in float32 and rounded to the storage type,
	// nearest even (the value Apply would store), into rot as float32.
	ScoresKVRope16 = Kernel{Field: "scoresKVRope16", Params: []Param{
		{"s", "[]float32"}, {"q", "[]float32"}, {"k", "[]uint16"}, {"table", "[]float32"}, {"idx", "[]int32"}, {"rot", "[]float32"},
		{"nk", "int"}, {"nb", "int"}, {"groups", "int"}, {"grp", "int"}, {"kStride", "int"}, {"sStride", "int"},
	}, Doc: "s[r·sStride + j] = q[r·HeadDim:]·round16(rope(widen(k[j·kStride + gi(r)·HeadDim:]), table row idx[j])) for j < nk; rot is scratch of 4·HeadDim floats"}

	// MaxRow is the attention form's running maximum (gen/attention): the
	// largest score of a tile's row and of the row's maximum so far, NaN when
	// any of them is NaN (Go's max).
	MaxRow = Kernel{Field: "maxRow", Params: []Param{{"row", "[]float32"}, {"m", "[]float32"}},
		Doc: "m[0] = max(m[0], row[0], …, row[len(row)−1]), NaN if any is NaN; len(m) ≥ 1"}

	// Exp is the test-only kernel dst[j] = exp(src[j]) with the vector expf
	// of softmaxRow, so that tests can measure its error.
	Exp = Kernel{Field: "expRow", TestOnly: true, Params: []Param{{"dst", "[]float32"}, {"src", "[]float32"}},
		Doc: "dst[j] = exp(src[j]) with softmaxRow's expf; len(src) == len(dst)"}
)

// All lists every kernel of the ABI, the test-only Exp included.
func All() []Kernel {
	return []Kernel{Rotate, Rotate16, AddRow, SoftmaxRow, SoftmaxRamp, AddRamp, AddRows, AddRows64, DotRows, ScoresRow, XLScoresRow, AxpyRows, ScaleRows, ScaleRows16, FarRows, ScoresKV, ScoresKVRope, ValuesKV, ScoresKV16, ValuesKV16, PairOrder16, ScoresKVRope16, Widen16, ExpShift, MaxRow, Exp}
}

// The digit tables of FarRows: a position's FarDigits digits of
// FarDigitBits bits each (its bytes, the top one signed), each with a table
// of 1<<FarDigitBits rows. The generated Go code builds its tables and the
// assembly indexes them with these.
const (
	FarDigitBits = 8
	FarDigits    = 4
)
