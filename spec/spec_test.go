package spec

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

const goldenDir = "../verify/testdata/golden/specs"

func TestGoldenSpecsParse(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no golden specs under %s", goldenDir)
	}
	for _, f := range files {
		s, err := Load(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if want := strings.TrimSuffix(filepath.Base(f), ".yaml"); s.Name != want {
			t.Errorf("%s: name %q, want %q", f, s.Name, want)
		}
		if s.File != f {
			t.Errorf("%s: File = %q", f, s.File)
		}
		data, _ := os.ReadFile(f)
		if s.Source != string(data) {
			t.Errorf("%s: Source differs from the file", f)
		}
		want := AllTargets
		if !reflect.DeepEqual(s.Targets, want) {
			t.Errorf("%s: targets %v, want the default %v", f, s.Targets, want)
		}
	}
}

func TestZoo(t *testing.T) {
	specs, err := Zoo()
	if err != nil {
		t.Fatal(err)
	}
	names := ZooNames()
	if len(specs) != len(names) || len(specs) < 12 {
		t.Fatalf("Zoo() gave %d specs, ZooNames() %d names; want the same, ≥ 12", len(specs), len(names))
	}
	for i, s := range specs {
		if s.Name != names[i] {
			t.Errorf("spec %d is %q, want %q (sorted by name)", i, s.Name, names[i])
		}
		if want := "zoo/" + s.Name + ".yaml"; s.File != want {
			t.Errorf("%s: File %q, want %q", s.Name, s.File, want)
		}
		first, _, _ := strings.Cut(s.Source, "\n")
		if !strings.HasPrefix(first, "# ") || !strings.Contains(first, ": ") {
			t.Errorf("%s: first line %q is not a '# <Model>: <source>' comment", s.Name, first)
		}
		if i > 0 && specs[i-1].Name >= s.Name {
			t.Errorf("zoo not sorted: %q before %q", specs[i-1].Name, s.Name)
		}
	}
	for _, n := range []string{"llama2_7b", "llama31_8b", "pythia_1b", "gptj_6b", "qwen25_7b_yarn", "mistral_7b",
		"bloom_7b1", "bloom_176b", "mpt_7b", "t5_base", "transformer_base", "bert_base"} {
		if _, err := ZooSpec(n); err != nil {
			t.Errorf("ZooSpec(%q): %v", n, err)
		}
	}
	if _, err := ZooSpec("no_such_model"); err == nil || !strings.Contains(err.Error(), "llama2_7b") {
		t.Errorf("ZooSpec of an unknown name: %v, want an error listing the zoo", err)
	}

	l3, _ := ZooSpec("llama31_8b")
	if sc := l3.Scaling; sc == nil || sc.Type != ScaleLlama3 || sc.Factor != 8 || sc.LowFreqFactor != 1 ||
		sc.HighFreqFactor != 4 || sc.OriginalMaxPosition != 8192 || l3.Base != 500000 || l3.RotaryDim != 128 {
		t.Errorf("llama31_8b decoded as %+v / %+v", l3, l3.Scaling)
	}
	py, _ := ZooSpec("pythia_1b")
	if py.HeadDim != 256 || py.RotaryDim != 64 || py.Layout != LayoutHalf || py.MaxPosition != 2048 {
		t.Errorf("pythia_1b decoded as %+v", py)
	}
	q, _ := ZooSpec("qwen25_7b_yarn")
	if sc := q.Scaling; sc.BetaFast != 32 || sc.BetaSlow != 1 || !sc.Truncate || sc.HasMscale || sc.HasAttentionFactor {
		t.Errorf("qwen25_7b_yarn scaling defaults: %+v", sc)
	}
	b, _ := ZooSpec("bloom_176b")
	if b.Heads != 112 || b.MaxBias != 8 || !b.Causal {
		t.Errorf("bloom_176b decoded as %+v", b)
	}
	for n, hd := range map[string]int{"bloom_7b1": 128, "bloom_176b": 128, "mpt_7b": 128, "t5_base": 64} {
		if z, err := ZooSpec(n); err != nil || z.HeadDim != hd {
			t.Errorf("%s: head_dim %v (%v), want %d", n, z, err, hd)
		}
	}
	t5, _ := ZooSpec("t5_base")
	if t5.Buckets == nil || *t5.Buckets != (Buckets{Num: 32, MaxDistance: 128, Bidirectional: true}) || t5.NumBuckets() != 32 {
		t.Errorf("t5_base decoded as %+v", t5)
	}
}

func mustParse(t *testing.T, src string) *Spec {
	t.Helper()
	s, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	return s
}

func TestDefaults(t *testing.T) {
	s := mustParse(t, "name: r\nencoding: rope\nhead_dim: 64\nlayout: interleaved\n")
	if s.RotaryDim != 64 || s.Base != 10000 || s.MaxPosition != 4096 || s.DType != "f32" || s.Scaling != nil {
		t.Errorf("rope defaults: %+v", s)
	}
	if !reflect.DeepEqual(s.Targets, AllTargets) {
		t.Errorf("targets %v", s.Targets)
	}
	s.Targets[0] = "changed"
	if AllTargets[0] != TargetGo {
		t.Fatal("default targets alias AllTargets")
	}

	s = mustParse(t, "name: r\nencoding: alibi\nheads: 8\ntargets: [cuda, go, neon]\ndtype: bf16\n")
	if !reflect.DeepEqual(s.Targets, []string{"go", "neon", "cuda"}) || s.DType != "bf16" {
		t.Errorf("targets %v dtype %q, want canonical order [go neon cuda] and bf16", s.Targets, s.DType)
	}
	if !s.HasTarget(TargetNEON) || s.HasTarget(TargetAVX2) {
		t.Errorf("HasTarget wrong for %v", s.Targets)
	}

	s = mustParse(t, "name: y\nencoding: rope\nhead_dim: 64\nlayout: half\nscaling: {type: yarn, factor: 4, original_max_position: 2048, mscale: 0.707}\n")
	if sc := s.Scaling; sc.BetaFast != 32 || sc.BetaSlow != 1 || !sc.Truncate || !sc.HasMscale || sc.Mscale != 0.707 ||
		sc.HasMscaleAllDim || sc.HasAttentionFactor {
		t.Errorf("yarn defaults: %+v", sc)
	}

	s = mustParse(t, "name: lr\nencoding: rope\nhead_dim: 4\nlayout: half\nscaling:\n  type: longrope\n  original_max_position: 8\n  short_factor: [1, 1]\n  long_factor: [2, 3.5]\n")
	if sc := s.Scaling; sc.Factor != 1 || !reflect.DeepEqual(sc.LongFactor, []float64{2, 3.5}) || sc.HasAttentionFactor {
		t.Errorf("longrope defaults: %+v", sc)
	}

	s = mustParse(t, "name: a\nencoding: alibi\nheads: 12\n")
	if s.MaxBias != 8 || !s.Causal || s.Slopes != nil || s.Base != 0 || s.HeadDim != 0 {
		t.Errorf("alibi defaults: %+v", s)
	}
	s = mustParse(t, "name: a\nencoding: alibi\nheads: 2\nslopes: [0.5, 0.25]\ncausal: false\n")
	if s.MaxBias != 0 || s.Causal || !reflect.DeepEqual(s.Slopes, []float64{0.5, 0.25}) {
		t.Errorf("alibi slopes: %+v", s)
	}

	s = mustParse(t, "name: b\nencoding: rpe_bias\nheads: 3\nbuckets: {num: 8, max_distance: 3}\n")
	if s.Buckets == nil || !s.Buckets.Bidirectional || s.NumBuckets() != 8 {
		t.Errorf("rpe_bias buckets defaults: %+v", s.Buckets)
	}
	s = mustParse(t, "name: b\nencoding: rpe_bias\nheads: 3\nr_max: 5\n")
	if s.NumBuckets() != 9 || s.Buckets != nil {
		t.Errorf("rpe_bias clamp: %+v", s)
	}

	s = mustParse(t, "name: s\nencoding: sinusoidal\nd_model: 16\n")
	if s.MaxLen != 4096 || s.Base != 10000 {
		t.Errorf("sinusoidal defaults: %+v", s)
	}
	s = mustParse(t, "name: x\nencoding: xl\nhead_dim: 16\n")
	if s.Base != 10000 {
		t.Errorf("xl defaults: %+v", s)
	}
	s = mustParse(t, "name: m\nencoding: mixture\nd_model: 15\nmax_len: 10\n")
	if s.Base != 0 || s.MaxLen != 10 || s.DModel != 15 {
		t.Errorf("mixture defaults: %+v", s)
	}
	for _, src := range []string{
		"name: l\nencoding: learned\nd_model: 3\nmax_len: 7\n",
		"name: g\nencoding: algebraic\nd_model: 2\nmax_len: 2\n",
		"name: n\nencoding: binary\nd_model: 1\nmax_len: 1\n",
		"name: f\nencoding: rpe_full\nhead_dim: 1\nr_max: 1\n",
		"# leading comment\n---\nname: c\nencoding: alibi\nheads: 1\n",
	} {
		mustParse(t, src)
	}
}

func TestErrors(t *testing.T) {
	rope := "name: r\nencoding: rope\nhead_dim: 64\nlayout: half\n" // lines 1-4
	cases := []struct {
		name, src, field string
		line             int
		msg              string // also expected in the message
	}{
		{"unknown top-level key", rope + "head_dims: 3\n", "head_dims", 5, "unknown key"},
		{"key of another encoding", "name: a\nencoding: alibi\nheads: 4\nd_model: 64\n", "d_model", 4, "does not apply to encoding alibi"},
		{"scaling key of another type", rope + "scaling:\n  type: yarn\n  factor: 2\n  original_max_position: 8\n  low_freq_factor: 1\n", "scaling.low_freq_factor", 9, "does not apply to scaling type yarn"},
		{"duplicate key", rope + "head_dim: 32\n", "head_dim", 5, "duplicate key (first given at line 3)"},
		{"float for int", "name: r\nencoding: rope\nhead_dim: 64.5\nlayout: half\n", "head_dim", 3, "must be an integer"},
		{"integral float for int", "name: r\nencoding: rope\nhead_dim: 64.0\nlayout: half\n", "head_dim", 3, "must be an integer"},
		{"string for int", "name: r\nencoding: rope\nhead_dim: \"64\"\nlayout: half\n", "head_dim", 3, "must be an integer"},
		{"list for scalar", rope + "base: [1, 2]\n", "base", 5, "must be a number"},
		{"scalar for list", "name: a\nencoding: alibi\nheads: 2\nslopes: 0.5\n", "slopes", 4, "must be a list"},
		{"infinite number", rope + "base: .inf\n", "base", 5, "finite"},
		{"nan in list", "name: a\nencoding: alibi\nheads: 2\nslopes:\n  - 0.5\n  - .nan\n", "slopes[1]", 6, "finite"},
		{"missing layout", "name: r\nencoding: rope\nhead_dim: 64\n", "layout", 1, "required"},
		{"missing name", "encoding: alibi\nheads: 2\n", "name", 1, "required"},
		{"missing encoding", "name: x\nheads: 2\n", "encoding", 1, "required"},
		{"unknown encoding", "name: x\nencoding: rotary\n", "encoding", 2, "one of rope"},
		{"bad name", "name: Llama\nencoding: alibi\nheads: 2\n", "name", 1, "[a-z][a-z0-9_]*"},
		{"keyword name", "name: func\nencoding: alibi\nheads: 2\n", "name", 1, "keyword"},
		{"main name", "name: main\nencoding: alibi\nheads: 2\n", "name", 1, "keyword"},
		{"GOARCH suffix", "name: rope_arm64\nencoding: alibi\nheads: 2\n", "name", 1, "ends in _arm64"},
		{"GOOS suffix", "name: rope_windows\nencoding: alibi\nheads: 2\n", "name", 1, "ends in _windows"},
		{"GOOS_GOARCH suffix", "name: rope_linux_amd64\nencoding: alibi\nheads: 2\n", "name", 1, "ends in _linux_amd64"},
		{"odd head_dim", "name: r\nencoding: rope\nhead_dim: 63\nlayout: half\n", "head_dim", 3, "even"},
		{"rotary_dim > head_dim", rope + "rotary_dim: 128\n", "rotary_dim", 5, "rotary_dim ≤ head_dim"},
		{"odd rotary_dim", rope + "rotary_dim: 7\n", "rotary_dim", 5, "even"},
		{"bad layout", "name: r\nencoding: rope\nhead_dim: 64\nlayout: neox\n", "layout", 4, "one of half, interleaved"},
		{"base ≤ 1", rope + "base: 1\n", "base", 5, "> 1"},
		{"table too large", rope + "max_position: 10000000\n", "max_position", 5, "MiB"},
		{"max_position 0", rope + "max_position: 0\n", "max_position", 5, "[1, "},
		{"scaling type missing", rope + "scaling:\n  factor: 2\n", "scaling.type", 5, "required"},
		{"scaling type unknown", rope + "scaling:\n  type: ntk_aware\n", "scaling.type", 6, "one of linear"},
		{"factor missing", rope + "scaling:\n  type: linear\n", "scaling.factor", 5, "required"},
		{"factor negative", rope + "scaling:\n  type: ntk\n  factor: -2\n", "scaling.factor", 7, "> 0"},
		{"original missing", rope + "scaling: {type: dynamic, factor: 2}\n", "scaling.original_max_position", 5, "required"},
		{"llama3 high < low", rope + "scaling:\n  type: llama3\n  factor: 8\n  original_max_position: 8192\n  low_freq_factor: 4\n  high_freq_factor: 2\n", "scaling.high_freq_factor", 10, "≥ low_freq_factor"},
		// 8192/1303.797294 ≈ 2π: pair 0's wavelength sits on the empty band's edge.
		{"llama3 empty band edge", rope + "scaling:\n  type: llama3\n  factor: 8\n  original_max_position: 8192\n  low_freq_factor: 1303.797294\n  high_freq_factor: 1303.797294\n", "scaling.high_freq_factor", 10, "pair 0's wavelength"},
		{"llama3 low missing", rope + "scaling:\n  type: llama3\n  factor: 8\n  original_max_position: 8192\n  high_freq_factor: 4\n", "scaling.low_freq_factor", 5, "required"},
		{"yarn betas", rope + "scaling:\n  type: yarn\n  factor: 8\n  original_max_position: 8192\n  beta_fast: 1\n", "scaling.beta_fast", 9, "beta_fast > beta_slow"},
		{"yarn mscale zero", rope + "scaling:\n  type: yarn\n  factor: 8\n  original_max_position: 8192\n  mscale: 0\n", "scaling.mscale", 9, "> 0"},
		{"longrope short length", rope + "scaling:\n  type: longrope\n  original_max_position: 8\n  short_factor: [1, 2]\n  long_factor: [1, 2]\n", "scaling.short_factor", 8, "32 entries"},
		{"longrope long missing", "name: r\nencoding: rope\nhead_dim: 4\nlayout: half\nscaling:\n  type: longrope\n  original_max_position: 8\n  short_factor: [1, 2]\n", "scaling.long_factor", 5, "required"},
		{"longrope original 1", rope + "scaling:\n  type: longrope\n  original_max_position: 1\n", "scaling.original_max_position", 7, "[2, "},
		{"ntk with rotary_dim 2", rope + "rotary_dim: 2\nscaling: {type: ntk, factor: 2}\n", "scaling.type", 6, "rotary_dim ≥ 4"},
		{"bad dtype", rope + "dtype: f64\n", "dtype", 5, "one of f32, f16, bf16"},
		{"unknown target", rope + "targets: [go, sse]\n", "targets[1]", 5, "unknown target"},
		{"duplicate target", rope + "targets:\n  - go\n  - go\n", "targets[1]", 7, "listed twice"},
		{"empty targets", rope + "targets: []\n", "targets", 5, "at least one"},
		{"alibi heads 0", "name: a\nencoding: alibi\nheads: 0\n", "heads", 3, "[1, "},
		{"alibi slopes count", "name: a\nencoding: alibi\nheads: 3\nslopes: [0.5, 0.25]\n", "slopes", 4, "one slope per head"},
		{"alibi slopes and max_bias", "name: a\nencoding: alibi\nheads: 2\nslopes: [0.5, 0.25]\nmax_bias: 8\n", "max_bias", 5, "not both"},
		{"alibi negative slope", "name: a\nencoding: alibi\nheads: 2\nslopes: [0.5, -0.25]\n", "slopes[1]", 4, "> 0"},
		{"alibi causal string", "name: a\nencoding: alibi\nheads: 2\ncausal: yes\n", "causal", 4, "true or false"},
		{"rpe neither", "name: b\nencoding: rpe_bias\nheads: 2\n", "r_max", 1, "exactly one"},
		{"rpe both", "name: b\nencoding: rpe_bias\nheads: 2\nr_max: 3\nbuckets: {num: 8, max_distance: 16}\n", "buckets", 5, "not both"},
		{"t5 odd bidirectional", "name: b\nencoding: rpe_bias\nheads: 2\nbuckets:\n  num: 7\n  max_distance: 16\n", "buckets.num", 5, "even"},
		{"t5 max_distance too small", "name: b\nencoding: rpe_bias\nheads: 2\nbuckets:\n  num: 32\n  max_distance: 8\n", "buckets.max_distance", 6, "> 8"},
		{"t5 num missing", "name: b\nencoding: rpe_bias\nheads: 2\nbuckets:\n  max_distance: 8\n", "buckets.num", 4, "required"},
		{"t5 unknown key", "name: b\nencoding: rpe_bias\nheads: 2\nbuckets:\n  num: 8\n  distance: 8\n", "buckets.distance", 6, "unknown key"},
		{"mixture base", "name: m\nencoding: mixture\nd_model: 4\nmax_len: 8\nbase: 100\n", "base", 5, "does not apply to encoding mixture"},
		{"sinusoidal odd d_model", "name: s\nencoding: sinusoidal\nd_model: 15\n", "d_model", 3, "even"},
		{"algebraic max_len 1", "name: g\nencoding: algebraic\nd_model: 4\nmax_len: 1\n", "max_len", 4, "[2, "},
		{"learned max_len missing", "name: l\nencoding: learned\nd_model: 4\n", "max_len", 1, "required"},
		{"rpe_full r_max missing", "name: f\nencoding: rpe_full\nhead_dim: 4\n", "r_max", 1, "required"},
		{"xl odd head_dim", "name: x\nencoding: xl\nhead_dim: 5\n", "head_dim", 3, "even"},
		{"scaling not a mapping", rope + "scaling: yarn\n", "scaling", 5, "must be a mapping"},
		{"alias", "name: a\nencoding: alibi\nheads: &h 2\nmax_bias: *h\n", "heads", 3, "anchors"},
		{"null value", rope + "base:\n", "base", 5, "must be a number, got null"},
		{"integer out of range", rope + "max_position: 99999999999999999999999\n", "max_position", 5, "must be an integer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse("bad.yaml", []byte(c.src))
			if err == nil {
				t.Fatalf("parsed %+v, want an error", s)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
			msg := err.Error()
			if e.Field != c.field || e.Line != c.line || e.File != "bad.yaml" {
				t.Errorf("got %q (field %q line %d), want field %q line %d", msg, e.Field, e.Line, c.field, c.line)
			}
			wantPrefix := "bad.yaml:" + strconv.Itoa(c.line) + ": " + c.field + ": "
			if !strings.HasPrefix(msg, wantPrefix) || !strings.Contains(msg, c.msg) {
				t.Errorf("message %q: want prefix %q and %q", msg, wantPrefix, c.msg)
			}
		})
	}
}

func TestDocumentErrors(t *testing.T) {
	cases := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"two documents", "name: a\nencoding: alibi\nheads: 2\n---\nname: b\n", 5, "more than one YAML document"},
		{"empty", "", 1, "empty spec"},
		{"comment only", "# nothing\n", 1, "empty spec"},
		{"not a mapping", "- name: a\n", 1, "must be a mapping"},
		{"syntax", "name: a\nencoding: [alibi\nheads: 2\n", 0, "YAML syntax"},
		{"bad indentation", "name: a\n encoding: alibi\n", 2, "YAML syntax"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("doc.yaml", []byte(c.src))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
			if (c.line != 0 && e.Line != c.line) || !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "doc.yaml") {
				t.Errorf("got %q (line %d), want line %d and %q", err, e.Line, c.line, c.msg)
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	for _, c := range []struct {
		e    Error
		want string
	}{
		{Error{"a.yaml", 3, "scaling.factor", "must be > 0"}, "a.yaml:3: scaling.factor: must be > 0"},
		{Error{"a.yaml", 0, "", "YAML syntax: x"}, "a.yaml: YAML syntax: x"},
		{Error{"a.yaml", 2, "", "more than one YAML document"}, "a.yaml:2: more than one YAML document"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "absent.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file: %v, want ErrNotExist", err)
	}
}

// TestBuildSuffix checks the file-name constraint rule on names that are
// and are not read as one by the go command.
func TestBuildSuffix(t *testing.T) {
	for name, want := range map[string]string{
		"rope_arm64": "_arm64", "x_windows": "_windows", "a_linux_amd64": "_linux_amd64",
		"x_js_wasm": "_js_wasm", "rope_386": "_386",
		"linux": "", "arm64": "", "llama2_7b": "", "rope_armv8": "", "bloom_7b1": "", "x_amd64_linux": "_linux",
	} {
		if got := buildSuffix(name); got != want {
			t.Errorf("buildSuffix(%q) = %q, want %q", name, got, want)
		}
	}
}
