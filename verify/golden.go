package verify

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/posenc/posenc/spec"
)

// The golden cases of the two independent PyTorch float64 oracles live in
// verify/testdata of a posenc checkout: testdata/golden (rope, alibi,
// rpe_bias, sinusoidal; see its README.md) and testdata/golden_rel (rpe_full
// and xl, computed by tools/golden/rel_golden.py; see its README.md). Both
// directories have the same format: a cases.json array whose entries name
// their arrays' files, each a little-endian array of 32-bit words. The
// golden_rel specs live with the other golden specs in testdata/golden/specs,
// so internal/goldens has a package for each case.
//
// They are read from disk, not embedded: only the packages generated from
// the golden specs (internal/goldens, tested inside the checkout) have cases
// there, and embedding them would put 0.7 MB of test data into every
// downstream module's vendor/ directory. goldenFS finds the checkout by
// walking up from the working directory to the go.mod of module
// github.com/posenc/posenc; outside one (a downstream module) there are no
// golden cases, and no spec there is a golden spec.
var goldenFS = sync.OnceValue(func() fs.FS {
	dir, err := os.Getwd()
	if err != nil {
		return nil
	}
	for {
		if isPosencModule(filepath.Join(dir, "go.mod")) {
			return os.DirFS(filepath.Join(dir, "verify"))
		}
		up := filepath.Dir(dir)
		if up == dir {
			return nil
		}
		dir = up
	}
})

// isPosencModule reports whether gomod is the go.mod of module
// github.com/posenc/posenc.
func isPosencModule(gomod string) bool {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`) == "github.com/posenc/posenc"
		}
	}
	return false
}

const (
	goldenDir    = "testdata/golden"
	relGoldenDir = "testdata/golden_rel"
)

// goldenEntry is a case type of a golden directory: *GoldenCase or
// *RelGoldenCase.
type goldenEntry interface {
	// caseName is the case's name (its spec's name).
	caseName() string
	// arrays maps each array's cases.json key to the field it fills: a
	// *[]float32, or a *[]int32 for positions.
	arrays() map[string]any
	// checkShapes reports an array whose length does not match the case
	// (nil when the case type checks none).
	checkShapes() error
}

// readCases decodes dir's cases.json into cases of type C and loads the
// arrays each case names, for both oracles' directories.
func readCases[C any, P interface {
	*C
	goldenEntry
}](dir string) ([]P, error) {
	what := path.Base(dir)
	fsys := goldenFS()
	if fsys == nil {
		return nil, nil // not inside a posenc checkout: no golden cases
	}
	data, err := fs.ReadFile(fsys, path.Join(dir, "cases.json"))
	if err != nil {
		return nil, err
	}
	var cases []P
	if err := json.Unmarshal(data, &cases); err != nil {
		return nil, fmt.Errorf("%s cases.json: %w", what, err)
	}
	// The file names, under the array keys of each entry.
	var files []map[string]any
	if err := json.Unmarshal(data, &files); err != nil {
		return nil, fmt.Errorf("%s cases.json: %w", what, err)
	}
	for n, c := range cases {
		for key, dst := range c.arrays() {
			file, ok := files[n][key].(string)
			if !ok || file == "" {
				continue
			}
			words, err := readWords(fsys, path.Join(dir, file))
			if err != nil {
				return nil, fmt.Errorf("%s case %s: %w", what, c.caseName(), err)
			}
			switch dst := dst.(type) {
			case *[]float32:
				v := make([]float32, len(words))
				for i, w := range words {
					v[i] = math.Float32frombits(w)
				}
				*dst = v
			case *[]int32:
				v := make([]int32, len(words))
				for i, w := range words {
					v[i] = int32(w)
				}
				*dst = v
			default:
				panic(fmt.Sprintf("verify: golden array %s has type %T", key, dst))
			}
		}
		if err := c.checkShapes(); err != nil {
			return nil, fmt.Errorf("%s case %s: %w", what, c.caseName(), err)
		}
	}
	return cases, nil
}

// readWords reads the file at name of fsys as little-endian 32-bit words,
// the format of the golden arrays.
func readWords(fsys fs.FS, name string) ([]uint32, error) {
	raw, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	if len(raw)%4 != 0 {
		return nil, fmt.Errorf("%s: %d bytes is not a multiple of 4", path.Base(name), len(raw))
	}
	w := make([]uint32, len(raw)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	return w, nil
}

// findCase returns the case named name of cases, or nil; err is the
// loader's error, returned as is.
func findCase[P goldenEntry](cases []P, err error, name string) (P, error) {
	var none P
	if err != nil {
		return none, err
	}
	for _, c := range cases {
		if c.caseName() == name {
			return c, nil
		}
	}
	return none, nil
}

// GoldenCase is one case of testdata/golden/cases.json, with its arrays
// loaded. Kind is "rope", "alibi", "rpe_bias" or "sinusoidal"; the fields
// that do not belong to Kind are zero.
type GoldenCase struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// SpecYAML is the YAML text of the case's spec.
	SpecYAML string `json:"spec"`

	Heads   int     `json:"heads"`
	Tokens  int     `json:"tokens"`
	HeadDim int     `json:"head_dim"`
	DModel  int     `json:"d_model"`
	LQ      int     `json:"lq"`
	LK      int     `json:"lk"`
	QOffset int     `json:"qoffset"`
	Causal  bool    `json:"causal"`
	Scale   float64 `json:"scale"` // alibi: the softmax scale

	// X is rope/sinusoidal input; Pos their positions; Want = Apply(X, Pos,
	// Heads) or Add(X, Pos).
	X    []float32 `json:"-"`
	Pos  []int32   `json:"-"`
	Want []float32 `json:"-"`
	// Scores ([heads][lq][lk]), WantSoftmax and WantBias for alibi; Table
	// and WantBias for rpe_bias.
	Scores      []float32 `json:"-"`
	WantSoftmax []float32 `json:"-"`
	WantBias    []float32 `json:"-"`
	Table       []float32 `json:"-"`
}

func (c *GoldenCase) caseName() string { return c.Name }

// arrays maps each array's cases.json key to its field.
func (c *GoldenCase) arrays() map[string]any {
	return map[string]any{
		"x": &c.X, "pos": &c.Pos, "want": &c.Want, "scores": &c.Scores,
		"want_softmax": &c.WantSoftmax, "want_bias": &c.WantBias, "table": &c.Table,
	}
}

// checkShapes checks nothing: these cases' lengths are not checked when
// they are loaded.
func (c *GoldenCase) checkShapes() error { return nil }

// GoldenCases returns every golden case with its arrays loaded, in the
// order of cases.json. The cases are loaded once and shared: callers must
// not modify them.
func GoldenCases() ([]*GoldenCase, error) { return loadGolden() }

var loadGolden = sync.OnceValues(func() ([]*GoldenCase, error) { return readCases[GoldenCase](goldenDir) })

// goldenCase returns the golden case of spec s (named s.Name), or nil. A
// spec read from the golden specs directory must have its case: missing
// golden data is an error, never a skipped comparison.
func goldenCase(s *spec.Spec) (*GoldenCase, error) {
	cases, err := GoldenCases()
	c, err := findCase(cases, err, s.Name)
	if err == nil && c == nil && isGoldenSpec(s) {
		return nil, fmt.Errorf("golden spec %s: no golden case %s (run inside a posenc checkout)", s.File, s.Name)
	}
	return c, err
}

// isGoldenSpec reports whether s was read from the golden specs directory.
func isGoldenSpec(s *spec.Spec) bool {
	return strings.Contains(filepath.ToSlash(s.File), "verify/testdata/golden/specs/")
}
