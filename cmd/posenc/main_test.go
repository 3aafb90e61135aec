package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/posenc/posenc/spec"
)

// runCLI runs posenc in-process and returns its exit status and output.
func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelpForEveryCommand(t *testing.T) {
	if code, out, _ := runCLI("-h"); code != 0 || !strings.Contains(out, "posenc verify") {
		t.Fatalf("posenc -h: code %d, output:\n%s", code, out)
	}
	for _, c := range commands {
		code, out, errs := runCLI(c.name, "-h")
		if code != 0 || !strings.Contains(out, "Usage: posenc "+c.name) {
			t.Errorf("posenc %s -h: code %d\nstdout:\n%s\nstderr:\n%s", c.name, code, out, errs)
		}
	}
	if code, _, errs := runCLI("frobnicate"); code != 2 || !strings.Contains(errs, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: code %d, stderr %q", code, errs)
	}
	if code, _, errs := runCLI("gen", "-nosuchflag"); code != 2 || !strings.Contains(errs, "nosuchflag") {
		t.Errorf("bad flag: code %d, stderr %q", code, errs)
	}
}

func TestListShowsTheZoo(t *testing.T) {
	code, out, _ := runCLI("list")
	if code != 0 {
		t.Fatalf("list: code %d", code)
	}
	for _, name := range spec.ZooNames() {
		if !strings.Contains(out, name) {
			t.Errorf("list does not show %s:\n%s", name, out)
		}
	}
}

func TestExplain(t *testing.T) {
	code, out, errs := runCLI("explain", "qwen25_7b_yarn")
	if code != 0 {
		t.Fatalf("explain: code %d: %s", code, errs)
	}
	// YaRN factor 4: attention factor 0.1·ln 4 + 1.
	for _, want := range []string{"attention factor A = 1.1386294361119891", "frequencies ω_i (64)", "scaling yarn: factor 4"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain qwen25_7b_yarn lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLI("explain", "bloom_176b")
	if code != 0 || !strings.Contains(out, "head 111") || strings.Contains(out, "head 112") {
		t.Errorf("explain bloom_176b: code %d, output:\n%s", code, out)
	}
	code, out, _ = runCLI("explain", "t5_base")
	if code != 0 || !strings.Contains(out, "→ bucket 0") {
		t.Errorf("explain t5_base: code %d, output:\n%s", code, out)
	}
	// Shaw et al.: clipping k = 16 (r_max 17) gives 2k+1 = 33 table rows; 1/√64 = 0.125.
	code, out, _ = runCLI("explain", "shaw2018_base")
	if code != 0 || !strings.Contains(out, "33 rows × 64") || !strings.Contains(out, "clip(rel, ±16)") || !strings.Contains(out, "= 0.125") {
		t.Errorf("explain shaw2018_base: code %d, output:\n%s", code, out)
	}
	// Transformer-XL: d_head 64 gives 32 frequency pairs, the first 1/10000^0 = 1.
	code, out, _ = runCLI("explain", "transformer_xl_base")
	if code != 0 || !strings.Contains(out, "inverse frequencies 1/base^(2i/d) (32)") || !strings.Contains(out, "    0  1  wavelength 6.28319") {
		t.Errorf("explain transformer_xl_base: code %d, output:\n%s", code, out)
	}
}

// A bad spec among good ones makes gen fail before anything is written.
func TestGenBadSpecWritesNothing(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("name: good\nencoding: alibi\nheads: 3\n"), 0o644)
	os.WriteFile(bad, []byte("name: bad\nencoding: rope\nhead_dim: 63\nlayout: half\n"), 0o644)
	out := filepath.Join(dir, "out")
	code, _, errs := runCLI("gen", "-o", out, good, bad)
	if code != 1 || !strings.Contains(errs, "bad.yaml:3: head_dim") {
		t.Fatalf("gen with a bad spec: code %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("gen wrote %s although a spec was bad", out)
	}
	code, _, errs = runCLI("gen", "-o", out, good)
	if code != 0 {
		t.Fatalf("gen good: code %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(out, "good", "good.go")); err != nil {
		t.Fatal(err)
	}
}

func TestParseBench(t *testing.T) {
	out := []byte(`goos: linux
BenchmarkApply/avx2/tokens=16-2         	  500000	      2390 ns/op	 109.70 MB/s
BenchmarkApply/go/tokens=16-2           	   50000	     20500 ns/op	  12.80 MB/s
BenchmarkCopy/tokens=16-2               	 1000000	      2220 ns/op	 118.10 MB/s
BenchmarkPlainLoop/tokens=16-2          	   30000	     30100 ns/op	   8.70 MB/s
`)
	rs := parseBench("s", out)
	if len(rs) != 2 {
		t.Fatalf("parsed %d kernel rows, want 2: %+v", len(rs), rs)
	}
	r := rs[0]
	if r.Kernel != "Apply" || r.Variant != "avx2" || r.Size != "tokens=16" || r.MBs != 109.70 || r.CopyMBs != 118.10 || r.PlainMBs != 8.70 {
		t.Fatalf("row %+v", r)
	}
}

// rpe_full/xl benchmarks report ns/op only; their baseline is the naive form.
func TestParseBenchNaive(t *testing.T) {
	out := []byte(`BenchmarkScores/go-2        	      10	 16000000 ns/op
BenchmarkScores/avx2-2      	     100	  3000000 ns/op
BenchmarkNaiveScores-2      	       5	 36000000 ns/op
BenchmarkOutput/avx2-2      	     100	  2000000 ns/op
`)
	rs := parseBench("s", out)
	if len(rs) != 3 {
		t.Fatalf("parsed %d kernel rows, want 3: %+v", len(rs), rs)
	}
	if r := rs[1]; r.Kernel != "Scores" || r.Variant != "avx2" || r.Ns != 3e6 || r.NaiveNs != 36e6 || r.MBs != 0 {
		t.Fatalf("row %+v", r)
	}
	if r := rs[2]; r.Kernel != "Output" || r.NaiveNs != 0 {
		t.Fatalf("Output has no naive baseline in this output, got %+v", r)
	}
	var b strings.Builder
	printBench(&b, rs)
	for _, want := range []string{"× naive O(L²·d)", "3.000", "12.00", "s     Output  avx2"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestParseBenchWithoutSizes(t *testing.T) {
	out := []byte(`BenchmarkSoftmax/avx512-2   	     100	  1000000 ns/op	 400.00 MB/s
BenchmarkPlainSoftmax-2     	      10	 20000000 ns/op	  20.00 MB/s
BenchmarkCopy-2             	    1000	   100000 ns/op	4000.00 MB/s
`)
	rs := parseBench("s", out)
	// No size in the names: SIZE is the bytes per call, 400 MB/s × 1 ms.
	if len(rs) != 1 || rs[0].Variant != "avx512" || rs[0].Size != "390.6 KiB/op" || rs[0].PlainMBs != 20 || rs[0].CopyMBs != 4000 {
		t.Fatalf("%+v", rs)
	}
}

// A Benchmark<Kernel>CopyRatio line's x-copy metric becomes that kernel and
// variant's × copy() figure, marked as timed back to back; it adds no row.
func TestParseBenchCopyRatio(t *testing.T) {
	out := []byte(`BenchmarkSoftmax/avx2-2   	     100	  1000000 ns/op	 400.00 MB/s
BenchmarkSoftmax/avx512-2   	     100	  1000000 ns/op	 500.00 MB/s
BenchmarkSoftmaxCopyRatio/avx2-2   	     100	  3000000 ns/op	         0.6100 x-copy
BenchmarkSoftmaxCopyRatio/go-2   	     100	  3000000 ns/op
BenchmarkCopy-2             	    1000	   100000 ns/op	4000.00 MB/s
`)
	rs := parseBench("s", out)
	if len(rs) != 2 || rs[0].XCopy != 0.61 || rs[1].XCopy != 0 {
		t.Fatalf("%+v", rs)
	}
	var b strings.Builder
	printBench(&b, rs)
	for _, want := range []string{"0.61*", "0.12 ", "back to back"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// import-hf produces a spec that gen accepts.
func TestImportHFThenGen(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "llama.yaml")
	code, _, errs := runCLI("import-hf", "-name", "llama31", "-o", out, "../../importer/testdata/llama31_8b.json")
	if code != 0 {
		t.Fatalf("import-hf: code %d: %s", code, errs)
	}
	s, err := spec.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "llama31" || s.Scaling == nil || s.Scaling.Type != spec.ScaleLlama3 || s.Base != 500000 {
		t.Fatalf("imported spec: %+v", s)
	}
	if code, _, errs := runCLI("gen", "-o", filepath.Join(dir, "out"), out); code != 0 {
		t.Fatalf("gen of the imported spec: code %d: %s", code, errs)
	}
	if code, _, errs := runCLI("import-hf", "../../importer/testdata/nonexistent.json"); code != 1 || errs == "" {
		t.Fatalf("missing input: code %d", code)
	}
}

// The rope engine-form benchmarks carry their own copy() baseline as the
// variant "copy"; it pairs with that kernel's rows of the same size only.
func TestParseBenchKernelCopy(t *testing.T) {
	out := []byte(`BenchmarkApplyQK/copy/1tok,p=1000-2    	 1000000	       100 ns/op	 400.00 MB/s
BenchmarkApplyQK/avx512/1tok,p=1000-2  	 1000000	       200 ns/op	 200.00 MB/s
BenchmarkApplyTo/copy/1tok,p=1000-2    	 1000000	       100 ns/op	 800.00 MB/s
BenchmarkApplyTo/avx512/1tok,p=1000-2  	 1000000	       200 ns/op	 400.00 MB/s
BenchmarkCopy/1tok,p=1000-2            	 1000000	       100 ns/op	 999.00 MB/s
`)
	rs := parseBench("s", out)
	if len(rs) != 2 {
		t.Fatalf("parsed %d kernel rows, want 2 (copy rows are baselines): %+v", len(rs), rs)
	}
	for _, r := range rs {
		if r.Variant != "avx512" || r.CopyMBs != 2*r.MBs {
			t.Errorf("row %+v: want its own kernel's copy, twice its MB/s", r)
		}
	}
}

// The bench table labels every size as Ntok[,p=P] (the generated Apply
// benchmarks say tokens=N, the engine forms Ntok,p=P) and ends with a legend
// of its columns and of the size labels it shows.
func TestBenchLabelsAndLegend(t *testing.T) {
	out := []byte(`BenchmarkApply/avx2/tokens=16-2         	  500000	      2390 ns/op	 109.70 MB/s
BenchmarkApply/avx2/tokens=524288-2     	     100	  2390000 ns/op	 9000.00 MB/s
BenchmarkCopy/tokens=16-2               	 1000000	      2220 ns/op	 118.10 MB/s
BenchmarkApplyQK/avx2/16tok,p=1000-2    	 1000000	       200 ns/op	 200.00 MB/s
BenchmarkApplyQK/avx2/1tok,p=1000+i-2   	 1000000	       200 ns/op	 200.00 MB/s
`)
	rs := parseBench("s", out)
	var b strings.Builder
	printBench(&b, rs)
	got := b.String()
	if strings.Contains(got, "tokens=") {
		t.Errorf("table still shows tokens=N:\n%s", got)
	}
	for _, want := range []string{"16tok ", "524288tok ", "16tok,p=1000", "1tok,p=1000+i", "GB/s: ", "× copy(): ", "× plain Go: ",
		"Ntok: N tokens", "Ntok,p=P: N tokens at positions P, P+1", "1tok,p=P+i: one token"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	// Apply: 16tok before 524288tok; ApplyQK: 1tok before 16tok.
	if strings.Index(got, "16tok ") > strings.Index(got, "524288tok") || strings.Index(got, "1tok,p=1000+i") > strings.Index(got, "16tok,p=1000") {
		t.Errorf("sizes out of order:\n%s", got)
	}
}

// A -benchtime go test would refuse is a usage error naming the value,
// before anything is generated or run.
func TestBenchtimeChecked(t *testing.T) {
	for _, v := range []string{"abc", "0s", "-1s", "0x", "x", "1.5x", "10"} {
		code, out, errs := runCLI("bench", "-benchtime", v, "-zoo", "llama2_7b")
		if code != 2 || !strings.Contains(errs, `-benchtime "`+v+`"`) || !strings.Contains(errs, "100x") || strings.Contains(out+errs, "-test.") {
			t.Errorf("-benchtime %s: code %d, stdout %q, stderr %q", v, code, out, errs)
		}
	}
	for _, v := range []string{"300ms", "2s", "100x", "1x"} {
		if err := checkBenchtime(v); err != nil {
			t.Errorf("checkBenchtime(%q): %v", v, err)
		}
	}
}

// posenc plot passes posenc-plot's exit status through: a usage error is 2,
// as docs/plots.md says (go run would make it 1), with no "exit status" line.
func TestPlotUsageExitStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds posenc-plot")
	}
	out := filepath.Join(t.TempDir(), "x.svg")
	code, _, errs := runCLI("plot", "-kind", "nope", "-zoo", "llama2_7b", "-o", out)
	if code != 2 || !strings.Contains(errs, `unknown kind "nope"`) || strings.Contains(errs, "exit status") {
		t.Errorf("plot -kind nope: code %d, stderr %q; want 2 and the usage message only", code, errs)
	}
	code, _, errs = runCLI("plot", "-zoo", "llama2_7b", "-o", filepath.Join(t.TempDir(), "x.gif"))
	if code != 2 || strings.Contains(errs, "exit status") {
		t.Errorf("plot -o x.gif: code %d, stderr %q; want 2", code, errs)
	}
}
