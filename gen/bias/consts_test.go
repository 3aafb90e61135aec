package bias

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/posenc/posenc/spec"
)

func TestALiBiSlopesPowerOfTwo(t *testing.T) {
	got := ALiBiSlopes(8, 8)
	for h, s := range got {
		if want := math.Exp2(-float64(h + 1)); s != want {
			t.Errorf("8 heads: slope[%d] = %v, want 2^-%d", h, s, h+1)
		}
	}
}

func TestALiBiSlopesNonPowerOfTwo(t *testing.T) {
	// get_slopes(6) = get_slopes(4) + get_slopes(8)[0::2][:2].
	want := []float64{0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125}
	got := ALiBiSlopes(6, 8)
	if len(got) != len(want) {
		t.Fatalf("6 heads: %d slopes", len(got))
	}
	for h := range want {
		if got[h] != want[h] {
			t.Errorf("6 heads: slope[%d] = %v, want %v", h, got[h], want[h])
		}
	}
	// 40 heads: 32 of 2^(−8(h+1)/32), then the odd powers 2^(−8(2k+1)/64).
	got = ALiBiSlopes(40, 8)
	if len(got) != 40 || got[31] != 1.0/256 || got[32] != math.Exp2(-8.0/64) || got[39] != math.Exp2(-8.0*15/64) {
		t.Errorf("40 heads: %v", got)
	}
	// max_bias generalizes the exponent.
	if got := ALiBiSlopes(4, 16); got[0] != 1.0/16 || got[3] != 1.0/65536 {
		t.Errorf("4 heads, max_bias 16: %v", got)
	}
}

func TestDeriveExplicitSlopes(t *testing.T) {
	s := &spec.Spec{File: "x.yaml", Name: "x", Encoding: spec.ALiBi, Heads: 2, Slopes: []float64{0.3, 0.7}}
	c, err := derive(s)
	if err != nil {
		t.Fatal(err)
	}
	if c.Slopes[0] != 0.3 || c.Slopes[1] != 0.7 {
		t.Errorf("slopes = %v", c.Slopes)
	}
	s.Slopes = []float64{1}
	if _, err := derive(s); err == nil {
		t.Error("1 slope for 2 heads: no error")
	}
}

func TestClampBucketMap(t *testing.T) {
	s := &spec.Spec{File: "x.yaml", Name: "x", Encoding: spec.RPEBias, Heads: 1, RMax: 3}
	c, err := derive(s)
	if err != nil {
		t.Fatal(err)
	}
	if c.NumBuckets != 5 || c.BucketSpan != 2 {
		t.Fatalf("NumBuckets %d, BucketSpan %d", c.NumBuckets, c.BucketSpan)
	}
	for i, b := range c.BucketMap {
		if b != i {
			t.Errorf("BucketMap[%d] = %d", i, b)
		}
	}
}

// goldenCase is the part of a golden cases.json entry this test reads.
type goldenCase struct {
	Name     string `json:"name"`
	Heads    int    `json:"heads"`
	LQ       int    `json:"lq"`
	LK       int    `json:"lk"`
	QOffset  int    `json:"qoffset"`
	NBuckets int    `json:"nbuckets"`
	Table    string `json:"table"`
	WantBias string `json:"want_bias"`
}

const goldenDir = "../../verify/testdata/golden"

func readF32(t *testing.T, name string) []float32 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenDir, name))
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// TestT5BucketMapGolden checks the T5 bucket maps against the oracle's
// gathered biases: the tables are random, so every bias value names the
// bucket it came from.
func TestT5BucketMapGolden(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(goldenDir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	specs := map[string]*spec.Spec{
		"grpe_t5":     {Heads: 4, Buckets: &spec.Buckets{Num: 32, MaxDistance: 128, Bidirectional: true}},
		"grpe_t5_uni": {Heads: 2, Buckets: &spec.Buckets{Num: 16, MaxDistance: 64, Bidirectional: false}},
		"grpe_clamp":  {Heads: 2, RMax: 3},
	}
	seen := 0
	for _, gc := range cases {
		s := specs[gc.Name]
		if s == nil {
			continue
		}
		seen++
		s.File, s.Name, s.Encoding = gc.Name+".yaml", gc.Name, spec.RPEBias
		c, err := derive(s)
		if err != nil {
			t.Fatal(err)
		}
		bucket := func(rel int) int {
			return c.BucketMap[min(max(rel, -c.BucketSpan), c.BucketSpan)+c.BucketSpan]
		}
		table, bias := readF32(t, gc.Table), readF32(t, gc.WantBias)
		if c.NumBuckets != gc.NBuckets || len(table) != gc.Heads*gc.NBuckets || len(bias) != gc.Heads*gc.LQ*gc.LK {
			t.Fatalf("%s: shapes do not match", gc.Name)
		}
		for h := range gc.Heads {
			row := table[h*gc.NBuckets : (h+1)*gc.NBuckets]
			for i := range gc.LQ {
				for j := range gc.LK {
					rel := gc.QOffset + i - j
					got := row[bucket(rel)]
					if want := bias[(h*gc.LQ+i)*gc.LK+j]; got != want {
						t.Errorf("%s: head %d rel %d: bucket %d gives %v, oracle %v", gc.Name, h, rel, bucket(rel), got, want)
					}
				}
			}
		}
	}
	if seen != len(specs) {
		t.Errorf("found %d of %d rpe golden cases", seen, len(specs))
	}
}

func TestT5BucketBoundaries(t *testing.T) {
	// num 32, max_distance 128, bidirectional: 16 buckets a side, 8 exact;
	// ln(d/8)/ln(16)·8 is an integer exactly at 16, 32, 64 (2, 4, 6).
	cases := []struct{ rel, want int }{
		{0, 0}, {7, 7}, {8, 8}, {15, 9}, {16, 10}, {31, 11}, {32, 12}, {63, 13}, {64, 14}, {127, 15}, {128, 15}, {1 << 40, 15},
		{-1, 17}, {-16, 26}, {-32, 28}, {-64, 30}, {-128, 31},
	}
	for _, tc := range cases {
		// rel is query − key; T5's relative_position is key − query.
		if got := T5Bucket(-tc.rel, true, 32, 128); got != tc.want {
			t.Errorf("rel %d: bucket %d, want %d", tc.rel, got, tc.want)
		}
	}
}
