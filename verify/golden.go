package verify

import (
	"embed"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"sync"
)

// goldenFS holds the golden cases of an independent PyTorch float64 oracle
// (see testdata/golden/README.md).
//
//go:embed testdata/golden
var goldenFS embed.FS

const goldenDir = "testdata/golden"

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

	// The array file names under testdata/golden ("" when absent).
	XFile, PosFile, WantFile          string `json:"-"`
	ScoresFile, SoftmaxFile, BiasFile string `json:"-"`
	TableFile                         string `json:"-"`

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

// UnmarshalJSON decodes one cases.json entry (file names under their JSON
// keys x, pos, want, scores, want_softmax, want_bias, table).
func (c *GoldenCase) UnmarshalJSON(b []byte) error {
	type plain GoldenCase
	var files struct {
		X           string `json:"x"`
		Pos         string `json:"pos"`
		Want        string `json:"want"`
		Scores      string `json:"scores"`
		WantSoftmax string `json:"want_softmax"`
		WantBias    string `json:"want_bias"`
		Table       string `json:"table"`
	}
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return err
	}
	if err := json.Unmarshal(b, &files); err != nil {
		return err
	}
	c.XFile, c.PosFile, c.WantFile = files.X, files.Pos, files.Want
	c.ScoresFile, c.SoftmaxFile, c.BiasFile = files.Scores, files.WantSoftmax, files.WantBias
	c.TableFile = files.Table
	return nil
}

// GoldenCases returns every golden case with its arrays loaded, in the
// order of cases.json. The cases are loaded once and shared: callers must
// not modify them.
func GoldenCases() ([]*GoldenCase, error) { return loadGolden() }

var loadGolden = sync.OnceValues(readGolden)

// readGolden decodes cases.json and the arrays it names.
func readGolden() ([]*GoldenCase, error) {
	data, err := goldenFS.ReadFile(path.Join(goldenDir, "cases.json"))
	if err != nil {
		return nil, err
	}
	var cases []*GoldenCase
	if err := json.Unmarshal(data, &cases); err != nil {
		return nil, fmt.Errorf("golden cases.json: %w", err)
	}
	for _, c := range cases {
		for _, f := range []struct {
			name string
			f32  *[]float32
			i32  *[]int32
		}{
			{c.XFile, &c.X, nil}, {c.PosFile, nil, &c.Pos}, {c.WantFile, &c.Want, nil},
			{c.ScoresFile, &c.Scores, nil}, {c.SoftmaxFile, &c.WantSoftmax, nil},
			{c.BiasFile, &c.WantBias, nil}, {c.TableFile, &c.Table, nil},
		} {
			if f.name == "" {
				continue
			}
			words, err := readWords(goldenFS, path.Join(goldenDir, f.name))
			if err != nil {
				return nil, fmt.Errorf("golden case %s: %w", c.Name, err)
			}
			if f.f32 != nil {
				v := make([]float32, len(words))
				for i, w := range words {
					v[i] = math.Float32frombits(w)
				}
				*f.f32 = v
			} else {
				v := make([]int32, len(words))
				for i, w := range words {
					v[i] = int32(w)
				}
				*f.i32 = v
			}
		}
	}
	return cases, nil
}

// readWords reads the file at name of fsys as little-endian 32-bit words,
// the format of the golden arrays.
func readWords(fsys embed.FS, name string) ([]uint32, error) {
	raw, err := fsys.ReadFile(name)
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

// goldenCase returns the golden case named name, or nil.
func goldenCase(name string) (*GoldenCase, error) {
	cases, err := GoldenCases()
	if err != nil {
		return nil, err
	}
	for _, c := range cases {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, nil
}
