package importer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/posenc/posenc/spec"
)

// ggufValue is one typed metadata value for the test encoder.
type ggufValue struct {
	typ uint32
	v   any // scalar Go value, string, or []ggufValue for arrays
	// elem is the element type of an array (needed for empty arrays).
	elem uint32
}

func u32v(v uint32) ggufValue  { return ggufValue{typ: ggufUint32, v: v} }
func f32v(v float32) ggufValue { return ggufValue{typ: ggufFloat32, v: v} }
func strv(s string) ggufValue  { return ggufValue{typ: ggufString, v: s} }
func arrv(elem uint32, items ...ggufValue) ggufValue {
	return ggufValue{typ: ggufArray, elem: elem, v: items}
}

// ggufKV is one metadata pair, in file order.
type ggufKV struct {
	key string
	val ggufValue
}

// ggufFile is a GGUF header to encode: metadata and tensor infos.
type ggufFile struct {
	version uint32
	order   binary.ByteOrder
	kvs     []ggufKV
	tensors []string
}

// encode writes the header as docs/gguf.md lays it out.
func (f ggufFile) encode() []byte {
	var b bytes.Buffer
	o := f.order
	if o == nil {
		o = binary.LittleEndian
	}
	ver := f.version
	if ver == 0 {
		ver = 3
	}
	w := func(v any) { _ = binary.Write(&b, o, v) }
	str := func(s string) { w(uint64(len(s))); b.WriteString(s) }
	var val func(v ggufValue)
	val = func(v ggufValue) {
		switch v.typ {
		case ggufString:
			str(v.v.(string))
		case ggufArray:
			items := v.v.([]ggufValue)
			w(v.elem)
			w(uint64(len(items)))
			for _, it := range items {
				val(it)
			}
		case ggufBool:
			if v.v.(bool) {
				b.WriteByte(1)
			} else {
				b.WriteByte(0)
			}
		default:
			w(v.v)
		}
	}
	b.WriteString("GGUF")
	w(ver)
	w(uint64(len(f.tensors)))
	w(uint64(len(f.kvs)))
	for _, kv := range f.kvs {
		str(kv.key)
		w(kv.val.typ)
		val(kv.val)
	}
	for i, name := range f.tensors {
		str(name)
		w(uint32(2))
		w(uint64(4096))
		w(uint64(32000))
		w(uint32(0))             // GGML_TYPE_F32
		w(uint64(i) * 4096 * 32) // offset into tensor data (never read)
	}
	return b.Bytes()
}

// allTypes is general metadata exercising every value type, including
// nested and string arrays, which the reader must skip correctly.
func allTypes() []ggufKV {
	return []ggufKV{
		{"general.name", strv("Test Model")},
		{"general.alignment", u32v(32)},
		{"test.u8", ggufValue{typ: ggufUint8, v: uint8(200)}},
		{"test.i8", ggufValue{typ: ggufInt8, v: int8(-5)}},
		{"test.u16", ggufValue{typ: ggufUint16, v: uint16(65000)}},
		{"test.i16", ggufValue{typ: ggufInt16, v: int16(-3000)}},
		{"test.i32", ggufValue{typ: ggufInt32, v: int32(-70000)}},
		{"test.u64", ggufValue{typ: ggufUint64, v: uint64(1) << 40}},
		{"test.i64", ggufValue{typ: ggufInt64, v: int64(-1) << 40}},
		{"test.f64", ggufValue{typ: ggufFloat64, v: math.Pi}},
		{"test.bool", ggufValue{typ: ggufBool, v: true}},
		{"tokenizer.ggml.tokens", arrv(ggufString, strv("<s>"), strv("</s>"), strv(strings.Repeat("x", 5000)))},
		{"tokenizer.ggml.scores", arrv(ggufFloat32, f32v(0), f32v(-1), f32v(-2))},
		{"tokenizer.ggml.token_type", arrv(ggufInt32, ggufValue{typ: ggufInt32, v: int32(1)})},
		{"test.nested", arrv(ggufArray, arrv(ggufUint8, ggufValue{typ: ggufUint8, v: uint8(1)}), arrv(ggufString, strv("a")))},
		{"test.empty", arrv(ggufUint64)},
		{"tokenizer.chat_template", strv(strings.Repeat("{% for m in messages %}", 300))},
	}
}

// llamaGGUF is a Llama-3-8B-like header (without llama3 rope_freqs).
func llamaGGUF() ggufFile {
	kvs := append([]ggufKV{{"general.architecture", strv("llama")}}, allTypes()...)
	kvs = append(kvs,
		ggufKV{"llama.context_length", u32v(8192)},
		ggufKV{"llama.embedding_length", u32v(4096)},
		ggufKV{"llama.block_count", u32v(32)},
		ggufKV{"llama.attention.head_count", u32v(32)},
		ggufKV{"llama.attention.head_count_kv", u32v(8)},
		ggufKV{"llama.rope.freq_base", f32v(500000)},
		ggufKV{"llama.rope.dimension_count", u32v(128)},
	)
	return ggufFile{kvs: kvs, tensors: []string{"token_embd.weight", "blk.0.attn_q.weight"}}
}

// with returns f with extra metadata appended.
func (f ggufFile) with(kvs ...ggufKV) ggufFile {
	f.kvs = append(append([]ggufKV(nil), f.kvs...), kvs...)
	return f
}

// without returns f without the metadata key.
func (f ggufFile) without(key string) ggufFile {
	var kvs []ggufKV
	for _, kv := range f.kvs {
		if kv.key != key {
			kvs = append(kvs, kv)
		}
	}
	f.kvs = kvs
	return f
}

// importGGUF imports f and parses the result.
func importGGUF(t *testing.T, f ggufFile) *spec.Spec {
	t.Helper()
	data := f.encode()
	out, err := FromGGUF("m", bytes.NewReader(data))
	if err != nil {
		t.Fatalf("FromGGUF: %v", err)
	}
	s, err := spec.Parse("m.yaml", out)
	if err != nil {
		t.Fatalf("output does not parse: %v\n%s", err, out)
	}
	again, _ := FromGGUF("m", iotest.OneByteReader(bytes.NewReader(data)))
	if !bytes.Equal(out, again) {
		t.Fatalf("FromGGUF is not deterministic / depends on read sizes")
	}
	return s
}

func arch(a string, kvs ...ggufKV) ggufFile {
	return ggufFile{kvs: append([]ggufKV{{"general.architecture", strv(a)}}, kvs...)}
}

func TestFromGGUF(t *testing.T) {
	t.Run("llama", func(t *testing.T) {
		f := llamaGGUF()
		out, err := FromGGUF("m", bytes.NewReader(f.encode()))
		if err != nil {
			t.Fatal(err)
		}
		if first := strings.SplitN(string(out), "\n", 2)[0]; first != "# imported from GGUF metadata (general.architecture llama)" {
			t.Errorf("first line %q", first)
		}
		s := importGGUF(t, f)
		if s.Encoding != "rope" || s.Layout != "interleaved" || s.HeadDim != 128 || s.RotaryDim != 128 || s.Base != 500000 || s.MaxPosition != 8192 || s.Scaling != nil {
			t.Errorf("llama: %+v", *s)
		}
	})
	t.Run("big-endian v2", func(t *testing.T) {
		f := llamaGGUF()
		f.order, f.version = binary.BigEndian, 2
		s := importGGUF(t, f)
		if s.HeadDim != 128 || s.Base != 500000 {
			t.Errorf("big-endian: %+v", *s)
		}
	})
	cases := []struct {
		name  string
		f     ggufFile
		check func(*spec.Spec) bool
	}{
		{"qwen2 yarn", arch("qwen2",
			ggufKV{"qwen2.context_length", u32v(131072)},
			ggufKV{"qwen2.embedding_length", u32v(3584)},
			ggufKV{"qwen2.attention.head_count", u32v(28)},
			ggufKV{"qwen2.rope.freq_base", f32v(1e6)},
			ggufKV{"qwen2.rope.scaling.type", strv("yarn")},
			ggufKV{"qwen2.rope.scaling.factor", f32v(4)},
			ggufKV{"qwen2.rope.scaling.original_context_length", u32v(32768)}),
			func(s *spec.Spec) bool {
				return s.Layout == "half" && s.HeadDim == 128 && s.MaxPosition == 32768 && s.Scaling.Type == "yarn" &&
					s.Scaling.Factor == 4 && s.Scaling.OriginalMaxPosition == 32768 && !s.Scaling.HasAttentionFactor
			}},
		{"yarn attn_factor and betas", arch("qwen3",
			ggufKV{"qwen3.context_length", u32v(40960)},
			ggufKV{"qwen3.attention.key_length", u32v(128)},
			ggufKV{"qwen3.attention.head_count", u32v(32)},
			ggufKV{"qwen3.rope.scaling.type", strv("yarn")},
			ggufKV{"qwen3.rope.scaling.factor", f32v(4)},
			ggufKV{"qwen3.rope.scaling.attn_factor", f32v(0.5)},
			ggufKV{"qwen3.rope.scaling.yarn_beta_fast", f32v(16)},
			ggufKV{"qwen3.rope.scaling.yarn_beta_slow", f32v(2)}),
			func(s *spec.Spec) bool {
				sc := s.Scaling
				want := 0.5 * (1 + 0.1*math.Log(4))
				return sc.OriginalMaxPosition == 40960 && sc.HasAttentionFactor && math.Abs(sc.AttentionFactor-want) < 1e-15 &&
					sc.BetaFast == 16 && sc.BetaSlow == 2 && s.Base == 10000
			}},
		{"gptneox partial", arch("gptneox",
			ggufKV{"gptneox.context_length", ggufValue{typ: ggufUint64, v: uint64(2048)}},
			ggufKV{"gptneox.embedding_length", u32v(2048)},
			ggufKV{"gptneox.attention.head_count", u32v(8)},
			ggufKV{"gptneox.rope.dimension_count", u32v(64)}),
			func(s *spec.Spec) bool { return s.Layout == "half" && s.HeadDim == 256 && s.RotaryDim == 64 }},
		{"linear via scale_linear", arch("llama",
			ggufKV{"llama.context_length", u32v(16384)},
			ggufKV{"llama.embedding_length", u32v(4096)},
			ggufKV{"llama.attention.head_count", u32v(32)},
			ggufKV{"llama.rope.scale_linear", f32v(4)}),
			func(s *spec.Spec) bool {
				return s.Scaling.Type == "linear" && s.Scaling.Factor == 4 && s.MaxPosition == 16384
			}},
		{"explicit none", arch("falcon",
			ggufKV{"falcon.embedding_length", u32v(4544)},
			ggufKV{"falcon.attention.head_count", ggufValue{typ: ggufInt32, v: int32(71)}},
			ggufKV{"falcon.rope.scaling.type", strv("none")},
			ggufKV{"falcon.rope.scaling.factor", f32v(1)}),
			func(s *spec.Spec) bool {
				return s.Layout == "half" && s.HeadDim == 64 && s.Scaling == nil && s.MaxPosition == spec.DefaultMaxPosition
			}},
		{"bloom", arch("bloom", ggufKV{"bloom.attention.head_count", u32v(112)}, ggufKV{"bloom.context_length", u32v(2048)}, ggufKV{"bloom.embedding_length", u32v(14336)}),
			func(s *spec.Spec) bool {
				return s.Encoding == "alibi" && s.Heads == 112 && s.MaxBias == 8 && s.Causal && s.HeadDim == 128
			}},
		{"mpt", arch("mpt", ggufKV{"mpt.attention.head_count", u32v(32)}, ggufKV{"mpt.attention.max_alibi_bias", f32v(8)}, ggufKV{"mpt.embedding_length", u32v(4096)}),
			func(s *spec.Spec) bool {
				return s.Encoding == "alibi" && s.Heads == 32 && s.MaxBias == 8 && s.HeadDim == 128
			}},
		{"t5", arch("t5", ggufKV{"t5.attention.head_count", u32v(12)}, ggufKV{"t5.attention.relative_buckets_count", u32v(32)},
			ggufKV{"t5.embedding_length", u32v(768)}, ggufKV{"t5.attention.key_length", u32v(64)}, ggufKV{"t5.attention.value_length", u32v(64)}),
			func(s *spec.Spec) bool {
				return s.Encoding == "rpe_bias" && s.Heads == 12 && s.Buckets.Num == 32 && s.Buckets.MaxDistance == 128 && s.Buckets.Bidirectional && s.HeadDim == 64
			}},
		{"bert", arch("bert", ggufKV{"bert.embedding_length", u32v(768)}, ggufKV{"bert.context_length", u32v(512)}, ggufKV{"bert.attention.head_count", u32v(12)}),
			func(s *spec.Spec) bool { return s.Encoding == "learned" && s.DModel == 768 && s.MaxLen == 512 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := importGGUF(t, c.f)
			if !c.check(s) {
				t.Errorf("unexpected spec %+v scaling %+v", *s, s.Scaling)
			}
		})
	}
}

// TestFromGGUFRefusals covers inputs that are well-formed GGUF but whose
// positional encoding posenc cannot import from metadata.
func TestFromGGUFRefusals(t *testing.T) {
	llama := llamaGGUF()
	withTensor := llama
	withTensor.tensors = append([]string{"rope_freqs.weight"}, llama.tensors...)
	longrope := arch("phi3",
		ggufKV{"phi3.embedding_length", u32v(3072)},
		ggufKV{"phi3.attention.head_count", u32v(32)})
	longrope.tensors = []string{"rope_factors_long.weight", "rope_factors_short.weight"}
	cases := []struct {
		name  string
		f     ggufFile
		field string
	}{
		{"llama3 rope_freqs tensor", withTensor, "rope_freqs.weight"},
		{"longrope factor tensors", longrope, "rope_factors_long.weight"},
		{"missing architecture", ggufFile{kvs: allTypes()}, "general.architecture"},
		{"architecture not a string", ggufFile{kvs: []ggufKV{{"general.architecture", u32v(1)}}}, "general.architecture"},
		{"unknown architecture", arch("mamba"), "general.architecture"},
		{"gemma3", arch("gemma3"), "general.architecture"},
		{"missing head count", llama.without("llama.attention.head_count"), "llama.attention.head_count"},
		{"missing embedding length", llama.without("llama.embedding_length"), "llama.embedding_length"},
		{"head count array", llama.without("llama.attention.head_count").with(ggufKV{"llama.attention.head_count", arrv(ggufUint32, u32v(32))}), "llama.attention.head_count"},
		{"odd rotary", llama.without("llama.rope.dimension_count").with(ggufKV{"llama.rope.dimension_count", u32v(63)}), "llama.rope.dimension_count"},
		{"rotary > head", llama.without("llama.rope.dimension_count").with(ggufKV{"llama.rope.dimension_count", u32v(256)}), "llama.rope.dimension_count"},
		{"freq_base string", llama.without("llama.rope.freq_base").with(ggufKV{"llama.rope.freq_base", strv("1e4")}), "llama.rope.freq_base"},
		{"freq_base NaN", llama.without("llama.rope.freq_base").with(ggufKV{"llama.rope.freq_base", f32v(float32(math.NaN()))}), "llama.rope.freq_base"},
		{"unknown rope key", llama.with(ggufKV{"llama.rope.dimension_sections", arrv(ggufInt32)}), "llama.rope.dimension_sections"},
		{"longrope type", llama.with(ggufKV{"llama.rope.scaling.type", strv("longrope")}), "llama.rope.scaling.type"},
		{"yarn without factor", llama.with(ggufKV{"llama.rope.scaling.type", strv("yarn")}), "llama.rope.scaling.factor"},
		{"yarn ext factor", llama.with(ggufKV{"llama.rope.scaling.type", strv("yarn")}, ggufKV{"llama.rope.scaling.factor", f32v(4)}, ggufKV{"llama.rope.scaling.yarn_ext_factor", f32v(0.5)}), "llama.rope.scaling.yarn_ext_factor"},
		{"linear attn factor", llama.with(ggufKV{"llama.rope.scaling.factor", f32v(2)}, ggufKV{"llama.rope.scaling.attn_factor", f32v(2)}), "llama.rope.scaling.attn_factor"},
		{"mpt without bias", arch("mpt", ggufKV{"mpt.attention.head_count", u32v(32)}), "mpt.attention.max_alibi_bias"},
		{"rope with alibi", llama.with(ggufKV{"llama.attention.max_alibi_bias", f32v(8)}), "llama.attention.max_alibi_bias"},
		{"bert without context", arch("bert", ggufKV{"bert.embedding_length", u32v(768)}), "bert.context_length"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := FromGGUF("m", bytes.NewReader(c.f.encode()))
			if err == nil {
				t.Fatalf("no error; output:\n%s", out)
			}
			var e *Error
			if !errors.As(err, &e) || e.Field != c.field || !strings.Contains(err.Error(), c.field) {
				t.Errorf("error %q, want one naming %q", err, c.field)
			}
		})
	}
}

// TestFromGGUFHostile feeds malformed headers: every one must be an error,
// promptly, without large allocations or panics.
func TestFromGGUFHostile(t *testing.T) {
	le := binary.LittleEndian
	head := func(version uint32, nt, nkv uint64) []byte {
		b := []byte("GGUF")
		b = le.AppendUint32(b, version)
		b = le.AppendUint64(b, nt)
		return le.AppendUint64(b, nkv)
	}
	key := func(b []byte, k string, typ uint32) []byte {
		b = le.AppendUint64(b, uint64(len(k)))
		b = append(b, k...)
		return le.AppendUint32(b, typ)
	}
	cases := map[string][]byte{
		"empty":                  nil,
		"bad magic":              append([]byte("GGML"), head(3, 0, 0)[4:]...),
		"version 1":              head(1, 0, 0),
		"version 4":              head(4, 0, 0),
		"version 0":              head(0, 0, 0),
		"huge tensor count":      head(3, 1<<62, 0),
		"huge kv count":          head(3, 0, 1<<62),
		"kv count past data":     head(3, 0, 5),
		"huge key length":        le.AppendUint64(head(3, 0, 1), 1<<62),
		"key over 64 KiB":        le.AppendUint64(head(3, 0, 1), 1<<17),
		"bad value type":         key(head(3, 0, 1), "k", 13),
		"huge value type":        key(head(3, 0, 1), "k", 0xffffffff),
		"huge string value":      le.AppendUint64(key(head(3, 0, 1), "k", ggufString), 1<<62),
		"string past data":       le.AppendUint64(key(head(3, 0, 1), "k", ggufString), 100),
		"bad array element type": le.AppendUint32(key(head(3, 0, 1), "k", ggufArray), 42),
		"huge fixed array":       le.AppendUint64(le.AppendUint32(key(head(3, 0, 1), "k", ggufArray), ggufUint64), 1<<61),
		"huge string array":      le.AppendUint64(le.AppendUint32(key(head(3, 0, 1), "k", ggufArray), ggufString), 1<<62),
		"huge nested array":      le.AppendUint64(le.AppendUint32(key(head(3, 0, 1), "k", ggufArray), ggufArray), 1<<62),
		"bool 2":                 append(key(head(3, 0, 1), "k", ggufBool), 2),
		"tensor name past data":  le.AppendUint64(head(3, 1, 0), 10),
		"tensor with 9 dims":     le.AppendUint32(le.AppendUint64(head(3, 1, 0), 0), 9),
	}
	// Arrays nested deeper than ggufMaxDepth.
	deep := key(head(3, 0, 1), "k", ggufArray)
	for i := 0; i < ggufMaxDepth+2; i++ {
		deep = le.AppendUint64(le.AppendUint32(deep, ggufArray), 1)
	}
	cases["deep nesting"] = deep
	// A duplicate key.
	dup := ggufFile{kvs: []ggufKV{{"general.architecture", strv("llama")}, {"general.architecture", strv("llama")}}}
	cases["duplicate key"] = dup.encode()
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := FromGGUF("m", bytes.NewReader(data))
			if err == nil {
				t.Fatalf("no error; output %s", out)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("error %v is not an *importer.Error", err)
			}
		})
	}
}

// TestFromGGUFTruncated cuts a valid header at every length: every prefix
// must be refused.
func TestFromGGUFTruncated(t *testing.T) {
	data := llamaGGUF().encode()
	if _, err := FromGGUF("m", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(data); n++ {
		if _, err := FromGGUF("m", bytes.NewReader(data[:n])); err == nil {
			t.Fatalf("prefix of %d/%d bytes accepted", n, len(data))
		}
	}
}

// TestFromGGUFStopsAtHeader checks that tensor data is never read: the
// reader fails if asked for anything past the tensor infos.
func TestFromGGUFStopsAtHeader(t *testing.T) {
	data := llamaGGUF().encode()
	r := io.MultiReader(bytes.NewReader(data), iotest.ErrReader(errors.New("tensor data must not be read")))
	// bufio reads ahead; a failing read past the header is fine as long as
	// the header itself was complete, so the error must not surface.
	if _, err := FromGGUF("m", r); err != nil {
		t.Fatal(err)
	}
}

func TestFromGGUFBadName(t *testing.T) {
	if _, err := FromGGUF("Bad-Name", bytes.NewReader(llamaGGUF().encode())); err == nil {
		t.Fatal("bad name accepted")
	}
}
