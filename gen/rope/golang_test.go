package rope

import (
	"bytes"
	"encoding/json"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	"github.com/posenc/posenc/gen/gocode/gocodetest"
	"github.com/posenc/posenc/internal/emit"
	"github.com/posenc/posenc/spec"
)

// ropeTestCase is one spec the rope emitter is tested with; golden cases
// also name their input and expected-output files.
type ropeTestCase struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Spec   string `json:"spec"`
	Heads  int    `json:"heads"`
	X      string `json:"x"`
	Pos    string `json:"pos"`
	Want   string `json:"want"`
	golden bool
}

const ropeGoldenDir = "../../verify/testdata/golden"

// ropeExtraCases add what the golden cases lack: a tiny table (so random
// positions mix table runs and exact chunks), odd pair counts, and scaled
// interleaved layouts.
var ropeExtraCases = []ropeTestCase{
	{Name: "rt_small_table", Spec: "name: rt_small_table\nencoding: rope\nhead_dim: 20\nrotary_dim: 14\nlayout: half\nbase: 10000\nmax_position: 50\n"},
	{Name: "rt_small_il", Spec: "name: rt_small_il\nencoding: rope\nhead_dim: 18\nrotary_dim: 10\nlayout: interleaved\nbase: 500\nmax_position: 7\n"},
	{Name: "rt_dynamic_il", Spec: "name: rt_dynamic_il\nencoding: rope\nhead_dim: 16\nlayout: interleaved\nmax_position: 300\nscaling:\n  type: dynamic\n  factor: 4\n  original_max_position: 100\n"},
	{Name: "rt_longrope_il", Spec: "name: rt_longrope_il\nencoding: rope\nhead_dim: 8\nlayout: interleaved\nmax_position: 64\nscaling:\n  type: longrope\n  factor: 8\n  original_max_position: 32\n  short_factor: [1, 1.5, 2, 3]\n  long_factor: [1, 4, 8, 16]\n  attention_factor: 0.75\n"},
}

// ropeCases returns the golden rope cases followed by ropeExtraCases.
func ropeCases(t *testing.T) []ropeTestCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ropeGoldenDir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all []ropeTestCase
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	var cs []ropeTestCase
	for _, c := range all {
		if c.Kind == "rope" {
			c.golden = true
			cs = append(cs, c)
		}
	}
	if len(cs) < 10 {
		t.Fatalf("only %d golden rope cases", len(cs))
	}
	return append(cs, ropeExtraCases...)
}

func ropeGenerate(t *testing.T, tc ropeTestCase) (*spec.Spec, []emit.File) {
	t.Helper()
	s, err := spec.Parse(tc.Name+".yaml", []byte(tc.Spec))
	if err != nil {
		t.Fatalf("%s: %v", tc.Name, err)
	}
	c, err := derive(s)
	if err != nil {
		t.Fatalf("%s: %v", tc.Name, err)
	}
	files, err := c.GoFiles()
	if err != nil {
		t.Fatalf("%s: %v", tc.Name, err)
	}
	return s, files
}

func TestRopeFilesDeterministicAndFormatted(t *testing.T) {
	for _, tc := range ropeCases(t) {
		s, a := ropeGenerate(t, tc)
		_, b := ropeGenerate(t, tc)
		want := []string{s.Name + ".go", s.Name + "_generic.go", s.Name + "_variants.go", s.Name + "_test.go"}
		if s.DType != "f16" && s.DType != "bf16" && len(s.MRoPESection) == 0 { // float32 without M-RoPE: the attention form
			want = append(want, s.Name+"_attention.go", s.Name+"_attention_test.go")
		}
		if len(a) != len(want) {
			t.Fatalf("%s: %d files, want %v", tc.Name, len(a), want)
		}
		for i, f := range a {
			if f.Name != want[i] {
				t.Errorf("%s: file %d is %s, want %s", tc.Name, i, f.Name, want[i])
			}
			if !bytes.Equal(f.Data, b[i].Data) {
				t.Errorf("%s: %s differs between two runs", tc.Name, f.Name)
			}
			if !bytes.HasPrefix(f.Data, []byte(emit.Header(s.File)+"\n")) {
				t.Errorf("%s: %s does not start with the generated-code header", tc.Name, f.Name)
			}
			formatted, err := format.Source(f.Data)
			if err != nil {
				t.Errorf("%s: %s: %v", tc.Name, f.Name, err)
			} else if !bytes.Equal(formatted, f.Data) {
				t.Errorf("%s: %s is not gofmt-formatted", tc.Name, f.Name)
			}
		}
	}
}

func TestRopeExactConstants(t *testing.T) {
	// The attention factor and the frequencies are written so that they read
	// back as the same float64.
	tc := ropeTestCase{Name: "grope_longrope_af", Spec: "name: grope_longrope_af\nencoding: rope\nhead_dim: 8\nlayout: half\nscaling:\n  type: longrope\n  factor: 32\n  original_max_position: 4096\n  short_factor: [1, 1.1, 1.2, 1.3]\n  long_factor: [1, 2, 3, 4]\n"}
	s, files := ropeGenerate(t, tc)
	c, err := derive(s)
	if err != nil {
		t.Fatal(err)
	}
	api := string(files[0].Data)
	if want := "const AttentionFactor = " + ropeFloatConst(c.AttentionFactor) + "\n"; !strings.Contains(api, want) {
		t.Errorf("API file lacks %q", want)
	}
	for _, w := range append(c.Freqs, c.LongFreqs...) {
		if !strings.Contains(api, "\t"+ropeFloat(w)+",\n") {
			t.Errorf("frequency %v is not written exactly", w)
		}
	}
	if ropeFloatConst(1) != "1.0" || ropeFloatConst(1.25) != "1.25" || ropeFloatConst(1e-300) != "1e-300" {
		t.Errorf("ropeFloatConst: %s %s %s", ropeFloatConst(1), ropeFloatConst(1.25), ropeFloatConst(1e-300))
	}
}

// TestRopeGeneratedPackages is the real proof: it writes each generated
// package into a temporary directory inside the module, adds a test of its
// own (a float64 rotation from the package's FrequenciesAt and
// AttentionFactor, the golden cases' expected outputs, the panics, the
// allocations), and runs go vet and go test on them.
func TestRopeGeneratedPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests generated packages")
	}
	goldenAbs, err := filepath.Abs(ropeGoldenDir)
	if err != nil {
		t.Fatal(err)
	}
	root, dir := gocodetest.ScratchModuleDir(t, "ropetest")
	check := template.Must(template.New("check").Parse(ropeCheckTemplate))

	var pkgs []string
	for _, tc := range ropeCases(t) {
		s, files := ropeGenerate(t, tc)
		pkg := gocodetest.WriteScratchPackage(t, root, dir, s.Name, files)
		var buf bytes.Buffer
		data := map[string]any{
			"Pkg": s.Name, "Interleaved": s.Layout == spec.LayoutInterleaved, "Golden": tc.golden,
			"Dir": goldenAbs, "X": tc.X, "Pos": tc.Pos, "Want": tc.Want, "Heads": tc.Heads,
			"OMP": 0,
		}
		if s.Scaling != nil {
			data["OMP"] = s.Scaling.OriginalMaxPosition
		}
		if err := check.Execute(&buf, data); err != nil {
			t.Fatal(err)
		}
		src, err := format.Source(buf.Bytes())
		if err != nil {
			t.Fatalf("check file: %v\n%s", err, buf.Bytes())
		}
		if err := os.WriteFile(filepath.Join(root, pkg, "ropecheck_test.go"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, pkg)
	}
	for _, args := range [][]string{{"vet"}, {"test", "-count=1"}} {
		out, err := gocodetest.GoOnPackages(t, root, pkgs, args...)
		if err != nil {
			t.Errorf("%v\n%s", err, out)
		} else {
			t.Logf("go %s:\n%s", args[0], out)
		}
	}
}

// ropeCheckTemplate is the test file added to each generated package by
// TestRopeGeneratedPackages.
const ropeCheckTemplate = `package {{.Pkg}}

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

const checkInterleaved = {{.Interleaved}}

// checkOMP is the scaling's original_max_position (0 without one).
const checkOMP = {{.OMP}}

// checkPair returns the dims of pair i.
func checkPair(i int) (int, int) {
	if checkInterleaved {
		return 2 * i, 2*i + 1
	}
	return i, i + RotaryDim/2
}

// checkRef rotates x in float64 with the package's own FrequenciesAt and
// AttentionFactor: it checks tables, exact path, dispatch and kernel.
func checkRef(x []float32, pos []int32, heads int, sign float64) []float64 {
	seq := math.MinInt32
	for _, p := range pos {
		seq = max(seq, int(p))
	}
	w := FrequenciesAt(seq + 1)
	y := make([]float64, len(x))
	for t, p := range pos {
		for h := 0; h < heads; h++ {
			o := (t*heads + h) * HeadDim
			for d := 0; d < HeadDim; d++ {
				y[o+d] = float64(x[o+d])
			}
			for i, wi := range w {
				s, c := math.Sincos(float64(p) * wi)
				s *= sign
				i0, i1 := checkPair(i)
				x0, x1 := float64(x[o+i0]), float64(x[o+i1])
				y[o+i0] = AttentionFactor * (x0*c - x1*s)
				y[o+i1] = AttentionFactor * (x1*c + x0*s)
			}
		}
	}
	return y
}

// checkClose applies the verification bound of docs/design/ per element: 1e-6·(|x0|+|x1|)·A up to
// 2^20, 1e-5 beyond (plus the float32 rounding of want); untouched dims must
// be exact.
func checkClose(t *testing.T, what string, x, got []float32, want []float64, pos []int32, heads int) {
	t.Helper()
	bad := 0
	for tk, p := range pos {
		tol := 1e-6
		if p >= 1<<20 || p <= -(1<<20) {
			tol = 1e-5
		}
		for h := 0; h < heads; h++ {
			o := (tk*heads + h) * HeadDim
			for d := RotaryDim; d < HeadDim; d++ {
				if got[o+d] != x[o+d] {
					t.Errorf("%s: token %d head %d dim %d changed: %v -> %v", what, tk, h, d, x[o+d], got[o+d])
				}
			}
			for i := 0; i < RotaryDim/2; i++ {
				i0, i1 := checkPair(i)
				bound := tol*(math.Abs(float64(x[o+i0]))+math.Abs(float64(x[o+i1])))*AttentionFactor + 1e-300
				for _, d := range []int{i0, i1} {
					e := math.Abs(float64(got[o+d]) - want[o+d])
					if e > bound+6e-8*math.Abs(want[o+d]) && bad < 10 {
						bad++
						t.Errorf("%s: pos %d head %d dim %d: got %v, want %v (err %.3g, bound %.3g)", what, p, h, d, got[o+d], want[o+d], e, bound)
					}
				}
			}
		}
	}
}

func checkInput(r *rand.Rand, tokens, heads int) []float32 {
	x := make([]float32, tokens*heads*HeadDim)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// checkPositions mixes table rows, negative and large positions, and runs
// longer than one exact chunk.
func checkPositions(r *rand.Rand, n int, limit int32) []int32 {
	pos := make([]int32, n)
	for i := range pos {
		switch r.IntN(6) {
		case 0:
			pos[i] = -r.Int32N(1 << 20)
		case 1:
			pos[i] = MaxPosition + r.Int32N(1000)
		case 2:
			pos[i] = r.Int32N(math.MaxInt32)
		default:
			pos[i] = r.Int32N(max(limit, 1))
		}
		pos[i] = min(pos[i], limit)
	}
	return pos
}

func TestCheckAgainstFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	limits := []int32{math.MaxInt32, MaxPosition - 1}
	if checkOMP > 0 {
		limits = append(limits, checkOMP-1)
	}
	for _, limit := range limits {
		for _, n := range []int{1, 3, 70, 200} {
			pos := checkPositions(r, n, limit)
			for _, heads := range []int{1, 3} {
				x := checkInput(r, n, heads)
				y := slices.Clone(x)
				Apply(y, pos, heads)
				checkClose(t, "Apply", x, y, checkRef(x, pos, heads, 1), pos, heads)
				y = slices.Clone(x)
				Inverse(y, pos, heads)
				checkClose(t, "Inverse", x, y, checkRef(x, pos, heads, -1), pos, heads)
			}
			q, k := checkInput(r, n, 3), checkInput(r, n, 1)
			q2, k2 := slices.Clone(q), slices.Clone(k)
			ApplyQK(q2, k2, pos, 3, 1)
			checkClose(t, "ApplyQK q", q, q2, checkRef(q, pos, 3, 1), pos, 3)
			checkClose(t, "ApplyQK k", k, k2, checkRef(k, pos, 1, 1), pos, 1)
			q3, k3 := slices.Clone(q), slices.Clone(k)
			Apply(q3, pos, 3)
			Apply(k3, pos, 1)
			if !slices.Equal(q2, q3) || !slices.Equal(k2, k3) {
				t.Errorf("ApplyQK differs from two Apply calls")
			}
		}
	}
	Apply(nil, nil, 1)
}

func TestCheckGolden(t *testing.T) {
	if !{{.Golden}} {
		t.Skip("no golden case")
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join({{printf "%q" .Dir}}, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	xb, pb, wb := read({{printf "%q" .X}}), read({{printf "%q" .Pos}}), read({{printf "%q" .Want}})
	x := make([]float32, len(xb)/4)
	want := make([]float64, len(wb)/4)
	pos := make([]int32, len(pb)/4)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(xb[4*i:]))
	}
	for i := range want {
		want[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(wb[4*i:])))
	}
	for i := range pos {
		pos[i] = int32(binary.LittleEndian.Uint32(pb[4*i:]))
	}
	y := slices.Clone(x)
	Apply(y, pos, {{.Heads}})
	checkClose(t, "golden", x, y, want, pos, {{.Heads}})
}

func checkPanics(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != want {
			t.Errorf("panic %v, want %q", r, want)
		}
	}()
	f()
}

func TestCheckPanics(t *testing.T) {
	x := make([]float32, 2*HeadDim+1)
	pos := []int32{1, 2}
	checkPanics(t, "{{.Pkg}}: Apply: len(x) = "+itoa(len(x))+", want len(pos)*heads*HeadDim = 2*1*"+itoa(HeadDim), func() { Apply(x, pos, 1) })
	checkPanics(t, "{{.Pkg}}: Inverse: heads = 0, want heads >= 1", func() { Inverse(x, pos, 0) })
	q := make([]float32, 2*2*HeadDim)
	for i := range q {
		q[i] = 1
	}
	checkPanics(t, "{{.Pkg}}: ApplyQK: len(k) = "+itoa(len(x))+", want len(pos)*kHeads*HeadDim = 2*1*"+itoa(HeadDim), func() { ApplyQK(q, x, pos, 2, 1) })
	checkPanics(t, "{{.Pkg}}: ApplyQK: kHeads = -1, want kHeads >= 1", func() { ApplyQK(q, x, pos, 2, -1) })
	for _, v := range q {
		if v != 1 {
			t.Fatal("q written before the panic")
		}
	}
}

func itoa(n int) string {
	return string(appendInt(nil, n))
}

func appendInt(b []byte, n int) []byte {
	if n < 0 {
		return appendInt(append(b, '-'), -n)
	}
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

// TestCheckChunkCache calls Apply on batches outside the table in the orders the
// chunk cache (rotateChunk) meets: one batch again and again (cached at its
// second call), another batch of the same length, the two alternating, and
// batches of two chunks; every result against the float64 reference. Then a
// new batch every call must allocate nothing (each is computed into the
// slot's spare).
func TestCheckChunkCache(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	far := func(n int) []int32 {
		p := make([]int32, n)
		for i := range p {
			p[i] = MaxPosition + r.Int32N(1<<30)
		}
		return p
	}
	a, b, two := far(7), far(7), far(exactChunk+9)
	for i, pos := range [][]int32{a, a, a, b, a, b, b, two, two, two, a, two} {
		x := checkInput(r, len(pos), 3)
		got := slices.Clone(x)
		Apply(got, pos, 3)
		checkClose(t, "Apply call "+itoa(i), x, got, checkRef(x, pos, 3, 1), pos, 3)
	}
	batches := make([][]int32, 30)
	for i := range batches {
		batches[i] = far(exactChunk)
	}
	x, n := checkInput(r, exactChunk, 2), 0
	if a := testing.AllocsPerRun(20, func() { Apply(x, batches[n], 2); n++ }); a != 0 {
		t.Errorf("a new batch outside the table every call allocates %v times per call", a)
	}
}

func TestCheckAllocsAndConcurrency(t *testing.T) {
	if MaxPosition > 16 {
		x := make([]float32, 16*4*HeadDim)
		pos := make([]int32, 16)
		for i := range pos {
			pos[i] = int32(i)
		}
		if a := testing.AllocsPerRun(50, func() { Apply(x, pos, 4) }); a != 0 {
			t.Errorf("table path allocates %v times per call", a)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	pos := checkPositions(r, 300, MaxPosition+100)
	x := checkInput(r, 300, 2)
	want := slices.Clone(x)
	Apply(want, pos, 2)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := 0; it < 20; it++ {
				y := slices.Clone(x)
				Apply(y, pos, 2)
				if !slices.Equal(y, want) {
					t.Error("concurrent Apply gave a different result")
					return
				}
			}
		}()
	}
	wg.Wait()
}
`
