// Package attention emits the attention form of a generated package: one
// engine (FlashAttention-2's tiled online softmax, the score matrix never in
// memory) shared by every family, into which a family contributes only its
// term: RoPE's rotation of the queries and keys, ALiBi's linear bias, the
// learned bucket bias of rpe_bias. The engine is Go source written once:
// engine.go.tmpl (types, scratch, the public forms), with its argument
// checks (checks.go.tmpl) and its block and tile loops (attend.go.tmpl)
// as named blocks; the terms are the named blocks of terms.go.tmpl, one
// per family, selected by Term.Family.
package attention

import (
	"bytes"
	"embed"
	"fmt"
	"go/format"
	"strings"
	"text/template"

	"github.com/dave/jennifer/jen"

	"github.com/posenc/posenc/asm/abi"
	"github.com/posenc/posenc/gen/gocode"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// Fields are the kernels-struct fields of the engine's kernels, which read
// the keys and values in their [key][KVHead][HeadDim] rows: a tile's scores
// (abi.ScoresKV), a row's running maximum (abi.MaxRow), the probabilities
// e^(s − m) and their sum (abi.ExpShift)
// and the tile's share of the output (abi.ValuesKV). The assembly comes from
// asm/bias.AttentionAMD64, which the families add to their own programs.
var Fields = []gocode.KernelField{
	{Name: abi.ScoresKV.Field, Type: abi.ScoresKV.FuncType()},
	{Name: abi.ValuesKV.Field, Type: abi.ValuesKV.FuncType()},
	{Name: abi.ExpShift.Field, Type: abi.ExpShift.FuncType()},
	{Name: abi.MaxRow.Field, Type: abi.MaxRow.FuncType()},
}

// GenericKernels adds the engine's portable kernels, emitted with the
// engine, to a family's genericKernels dict.
func GenericKernels(d jen.Dict) {
	d[jen.Id(abi.ScoresKV.Field)] = jen.Id("scoresKVGeneric")
	d[jen.Id(abi.ValuesKV.Field)] = jen.Id("valuesKVGeneric")
	d[jen.Id(abi.ExpShift.Field)] = jen.Id("expShiftGeneric")
	d[jen.Id(abi.MaxRow.Field)] = jen.Id("maxRowGeneric")
}

// Fields16 are the kernels-struct fields a package with 16-bit storage adds:
// widenRow (abi.Widen16), which turns a tile of f16 or bf16 keys or values
// into the float32 the other kernels read, and scoresKV16 and valuesKV16
// (abi.ScoresKV16, abi.ValuesKV16), which read a decode block's 16-bit keys
// and values where they are (the amd64 and NEON variants; nil in the pure
// Go one: the engine widens instead), and pairOrder16 (abi.PairOrder16),
// set by the variants whose bf16 kernels read q and keep acc in pair order
// (AVX-512).
var Fields16 = []gocode.KernelField{
	{Name: abi.Widen16.Field, Type: abi.Widen16.FuncType()},
	{Name: abi.ScoresKV16.Field, Type: abi.ScoresKV16.FuncType()},
	{Name: abi.ValuesKV16.Field, Type: abi.ValuesKV16.FuncType()},
	{Name: abi.PairOrder16.Field, Type: abi.PairOrder16.FuncType()},
}

// GenericKernel16 adds the portable widenRow, emitted with the engine, to
// the genericKernels dict of a package with 16-bit storage.
func GenericKernel16(d jen.Dict) { d[jen.Id(abi.Widen16.Field)] = jen.Id("widenRowGeneric") }

//go:embed engine.go.tmpl checks.go.tmpl attend.go.tmpl terms.go.tmpl bench.go.tmpl
var sources embed.FS

// engine is the parsed engine with the families' terms.
var engine = template.Must(template.ParseFS(sources, "engine.go.tmpl", "checks.go.tmpl", "attend.go.tmpl", "terms.go.tmpl", "bench.go.tmpl"))

// Term is a family's part of the attention form of one spec.
type Term struct {
	// Family selects the term's blocks in terms.go.tmpl: "rope", "alibi",
	// "rpe_bias", "rpe_full" or "xl".
	Family string
	// What names the term in the doc comment of Attention ("rotation", "ALiBi bias").
	What string
	// Doc are the family's lines of Attention's doc comment.
	Doc []string
	// RuntimeSwitch (rope): the frequencies depend on the call's positions
	// (dynamic NTK, LongRoPE), so the engine passes max(qpos, kpos)+1.
	RuntimeSwitch bool
	// FusedRope (rope): the package has scoresKVRope on its amd64 variants
	// (nil elsewhere), which decode blocks of in-table keys use.
	FusedRope bool
	// MRoPE (rope): the package rotates by multimodal ids (rotateMRoPE, Axes
	// ids per token): Attention and AttentionPaged take qids and kids,
	// AttentionRotated qids, while qpos and kpos only mask. Not with
	// Storage16 or FusedRope.
	MRoPE bool
	// Storage16 (rope): the package stores f16 or bf16 ([]uint16 tensors,
	// its widen and narrow), so the attention form takes []uint16 q, k, v
	// and out, widens tiles into float32 scratch (widenRow) and narrows out.
	Storage16 bool
	// HeadDim is emitted as the package's HeadDim constant by families that do
	// not have one (alibi, rpe_bias); 0 for rope, whose package declares it.
	HeadDim int
}

// data is what the engine template reads.
type data struct {
	Term
	Pkg               string
	Rope, Bias, Table bool
	// Full (rpe_full): Shaw's a^K and a^V tables follow v; Bucketed (rpe_bias,
	// rpe_full): the term is a bucket's value, so far tiles take one shift.
	Full, Bucketed bool
	// XL (xl): Transformer-XL's rel, uBias and vBias follow v.
	XL bool
	// ExtraParams and ExtraArgs are the family's operands after v in the
	// parameter lists and calls ("table []float32, " and "table, " for rpe_bias).
	ExtraParams, ExtraArgs string
	// AttendParams, AttendArgs and AttendArgsPaged are the family's operands
	// of the engine function attend and of its calls from the contiguous
	// (and rotated) and the paged forms: ExtraParams and ExtraArgs, except
	// for M-RoPE, whose key ids travel with the keys and whose query ids are
	// sliced per sequence.
	AttendParams, AttendArgs, AttendArgsPaged string
	Elem                                      string // the tensors' Go element type: float32, or uint16 (Storage16)
	SeqLenArg, SeqLenPaged                    string
	BenchQHeads, BenchKVHeads                 int
}

// Files emits <name>_attention.go for spec s with the family term t, and
// <name>_attention_test.go, its benchmarks (the harness runs from the
// family's TestVariants, through Run).
func Files(s *spec.Spec, t Term) ([]emit.File, error) {
	d := data{Term: t, Pkg: s.Name, Elem: "float32", SeqLenArg: "0", SeqLenPaged: "0", BenchQHeads: 32, BenchKVHeads: 8}
	if t.Storage16 {
		if t.Family != "rope" {
			return nil, fmt.Errorf("attention: %s: 16-bit storage in family %q (only rope packages store 16 bits)", s.File, t.Family)
		}
		d.Elem = "uint16"
	}
	switch t.Family {
	case "rope":
		d.Rope = true
		if t.MRoPE {
			if t.FusedRope {
				return nil, fmt.Errorf("attention: %s: M-RoPE has no fused rotation (its keys rotate by ids through rotateMRoPE)", s.File)
			}
			d.MRoPE = true
			d.ExtraParams, d.ExtraArgs = "qids, kids []int32, ", "qids, kids, "
		}
	case "alibi":
		d.Bias = true
	case "rpe_bias":
		d.Bias, d.Table, d.Bucketed = true, true, true
		d.ExtraParams, d.ExtraArgs = "table []float32, ", "table, "
	case "rpe_full":
		d.Full, d.Bucketed = true, true
		d.ExtraParams, d.ExtraArgs = "aK, aV []float32, ", "aK, aV, "
	case "xl":
		d.XL = true
		d.ExtraParams, d.ExtraArgs = "rel, uBias, vBias []float32, ", "rel, uBias, vBias, "
	default:
		return nil, fmt.Errorf("attention: %s: no term for family %q", s.File, t.Family)
	}
	d.AttendParams, d.AttendArgs, d.AttendArgsPaged = d.ExtraParams, d.ExtraArgs, d.ExtraArgs
	if d.MRoPE {
		d.AttendParams, d.AttendArgs, d.AttendArgsPaged = "qids []int32, ", "qids, ", "qids[q0*Axes : q1*Axes], "
	}
	if d.Bias {
		d.BenchQHeads, d.BenchKVHeads = s.Heads, s.Heads
	}
	if t.RuntimeSwitch {
		d.SeqLenArg = "attnSeqLen(qpos, kpos)"
		d.SeqLenPaged = "n"
	}
	var head string
	if t.HeadDim > 0 {
		head = fmt.Sprintf("// HeadDim is the dimension of an attention head: q, k, v and out rows of Attention.\nconst HeadDim = %d\n\n", t.HeadDim)
	}
	eng, err := render(s, d, s.Name+"_attention.go", "engine.go.tmpl", []string{"math", "strconv", "sync"}, head)
	if err != nil {
		return nil, err
	}
	bench, err := render(s, d, s.Name+"_attention_test.go", "bench.go.tmpl", []string{"math", "strconv", "testing", "time"}, "")
	if err != nil {
		return nil, err
	}
	return []emit.File{eng, bench}, nil
}

// render executes template name into the Go file called file, with its
// header, package clause, imports and head, formatted.
func render(s *spec.Spec, d data, file, name string, imports []string, head string) (emit.File, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n\npackage %s\n\nimport (\n", emit.Header(s.File), s.Name)
	for _, im := range imports {
		fmt.Fprintf(&b, "\t%q\n", im)
	}
	b.WriteString(")\n\n" + head)
	if err := engine.ExecuteTemplate(&b, name, d); err != nil {
		return emit.File{}, fmt.Errorf("attention: %s: %w", s.File, err)
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return emit.File{}, fmt.Errorf("attention: %s: formatting %s: %w\n%s", s.File, file, err, numbered(b.String()))
	}
	return emit.File{Name: file, Data: src}, nil
}

// numbered prefixes each line of src with its number, for formatting errors.
func numbered(src string) string {
	var b strings.Builder
	for i, l := range strings.Split(src, "\n") {
		fmt.Fprintf(&b, "%4d %s\n", i+1, l)
	}
	return b.String()
}

// Run returns the harness call of the attention form for a generated test,
// verify.RunAttention(s, attentionKernels()), and emits attentionKernels
// into f: the package's Attention, AttentionRotated (rope) and
// AttentionPaged adapted to verify's signatures (its options convert
// directly: the two structs have the same fields).
func Run(f *jen.File, t Term) jen.Code {
	if t.Storage16 || t.MRoPE {
		return runRope(f, t)
	}
	verify := gocode.VerifyPath
	opts := func() jen.Code { return jen.Id("AttentionOptions").Call(jen.Id("o")) }
	optParam := jen.Id("o").Qual(verify, "AttentionOptions")
	tableArg := func() []jen.Code {
		switch t.Family {
		case "rpe_bias":
			return []jen.Code{jen.Id("table")}
		case "rpe_full":
			// verify packs Shaw's aK and aV into table, one after the other.
			half := jen.Len(jen.Id("table")).Op("/").Lit(2)
			return []jen.Code{jen.Id("table").Index(jen.Empty(), half), jen.Id("table").Index(half.Clone(), jen.Empty())}
		case "xl":
			// verify packs uBias, vBias ([QHeads][HeadDim] each) and rel into table
			// (attnXLSplit: a short table gives short operands, which the form refuses).
			return ids([]string{"rel", "uBias", "vBias"})
		}
		return nil
	}
	// split (xl) unpacks table into the operands tableArg names.
	var split []jen.Code
	if t.Family == "xl" {
		split = []jen.Code{jen.List(tableArg()...).Op(":=").Id("attnXLSplit").Call(jen.Id("table"), jen.Id("o"))}
	}
	f32 := func(names ...string) jen.Code { return jen.List(ids(names)...).Index().Float32() }
	i32 := func(names ...string) jen.Code { return jen.List(ids(names)...).Index().Int32() }
	d := jen.Dict{
		jen.Id("HeadDim"): jen.Id("HeadDim"),
		jen.Id("Attention"): jen.Func().Params(f32("out", "q", "k", "v", "table"), i32("qpos", "kpos"), optParam.Clone()).Block(append(split,
			jen.Id("Attention").Call(append(append(ids([]string{"out", "q", "k", "v"}), tableArg()...), jen.Id("qpos"), jen.Id("kpos"), opts())...),
		)...),
		jen.Id("AttentionPaged"): jen.Func().Params(f32("out", "q", "kCache", "vCache", "table"), i32("qpos", "qStart", "slots", "kpos", "kStart"), optParam.Clone()).Block(append(split,
			jen.Id("AttentionPaged").Call(append(append(ids([]string{"out", "q", "kCache", "vCache"}), tableArg()...),
				jen.Id("qpos"), jen.Id("qStart"), jen.Id("slots"), jen.Id("kpos"), jen.Id("kStart"), opts())...),
		)...),
	}
	if t.Family == "rope" {
		d[jen.Id("AttentionRotated")] = jen.Func().Params(f32("out", "q", "k", "v"), i32("qpos", "kpos"), optParam.Clone()).Block(
			jen.Id("AttentionRotated").Call(jen.Id("out"), jen.Id("q"), jen.Id("k"), jen.Id("v"), jen.Id("qpos"), jen.Id("kpos"), opts()),
		)
	}
	if t.Family == "xl" {
		// func attnXLSplit(table []float32, o verify.AttentionOptions) (rel, uBias, vBias []float32)
		n := jen.Id("n")
		f.Comment("attnXLSplit returns verify's packed table, uBias ‖ vBias ‖ rel, as the form's operands.")
		f.Func().Id("attnXLSplit").Params(jen.Id("table").Index().Float32(), optParam.Clone()).Params(jen.List(jen.Id("rel"), jen.Id("uBias"), jen.Id("vBias")).Index().Float32()).Block(
			jen.Id("n").Op(":=").Min(jen.Len(jen.Id("table")), jen.Id("o").Dot("QHeads").Op("*").Id("HeadDim")),
			jen.Id("m").Op(":=").Min(jen.Len(jen.Id("table")), n.Clone().Op("*").Lit(2)),
			jen.Return(jen.Id("table").Index(jen.Id("m"), jen.Empty()), jen.Id("table").Index(jen.Empty(), n.Clone()), jen.Id("table").Index(n.Clone(), jen.Id("m"))),
		)
	}
	f.Comment("attentionKernels adapts the attention form to verify.RunAttention.")
	f.Func().Id("attentionKernels").Params().Qual(verify, "AttentionKernels").Block(
		jen.Return(jen.Qual(verify, "AttentionKernels").Values(d)),
	)
	return jen.Qual(verify, "RunAttention").Call(jen.Id("s"), jen.Id("attentionKernels").Call())
}

// runRope is Run for a rope package with 16-bit storage or M-RoPE: its
// Attention, AttentionRotated and AttentionPaged passed to verify as they
// are (uint16 slices to verify.AttentionKernels16, whose RunAttention16
// rounds as the storage does; M-RoPE forms, which take ids, as the
// *MRoPE fields).
func runRope(f *jen.File, t Term) jen.Code {
	verify := gocode.VerifyPath
	elem, kernels, run := jen.Float32(), "AttentionKernels", "RunAttention"
	if t.Storage16 {
		elem, kernels, run = jen.Uint16(), "AttentionKernels16", "RunAttention16"
	}
	vec := func(names ...string) jen.Code { return jen.List(ids(names)...).Index().Add(elem) }
	i32 := func(names ...string) jen.Code { return jen.List(ids(names)...).Index().Int32() }
	opt := jen.Id("o").Qual(verify, "AttentionOptions")
	// form is one entry: verify's field (the form's name, + MRoPE for M-RoPE),
	// the slices and the position arguments (ids first for M-RoPE).
	d := jen.Dict{jen.Id("HeadDim"): jen.Id("HeadDim")}
	form := func(fn string, slices, pos, mropeIDs []string) {
		field := fn
		if t.MRoPE {
			field += "MRoPE"
			pos = append(mropeIDs, pos...)
		}
		args := append(append(ids(slices), ids(pos)...), jen.Id("AttentionOptions").Call(jen.Id("o")))
		d[jen.Id(field)] = jen.Func().Params(vec(slices...), i32(pos...), opt.Clone()).Block(jen.Id(fn).Call(args...))
	}
	form("Attention", []string{"out", "q", "k", "v"}, []string{"qpos", "kpos"}, []string{"qids", "kids"})
	form("AttentionRotated", []string{"out", "q", "k", "v"}, []string{"qpos", "kpos"}, []string{"qids"})
	form("AttentionPaged", []string{"out", "q", "kCache", "vCache"}, []string{"qpos", "qStart", "slots", "kpos", "kStart"}, []string{"qids", "kids"})
	f.Comment(fmt.Sprintf("%s hands the attention form to verify.%s.", lowerFirst(kernels), run))
	f.Func().Id(lowerFirst(kernels)).Params().Qual(verify, kernels).Block(
		jen.Return(jen.Qual(verify, kernels).Values(d)),
	)
	return jen.Qual(verify, run).Call(jen.Id("s"), jen.Id(lowerFirst(kernels)).Call())
}

// lowerFirst is s with its first letter in lower case.
func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

// ids returns the identifiers of names.
func ids(names []string) []jen.Code {
	out := make([]jen.Code, len(names))
	for i, n := range names {
		out[i] = jen.Id(n)
	}
	return out
}
