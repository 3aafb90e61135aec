package kernelfuzz

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/posenc/posenc/spec"
	"github.com/posenc/posenc/verify"
)

// learnedTable returns a fixed random [rows][d] table (built once: drawing
// it per fuzz iteration would dominate the iteration's time).
var learnedTable = sync.OnceValue(func() []float32 {
	p := absPkgs[1]
	return randomValues(rand.New(rand.NewPCG(7, 7)), p.maxLen*p.dModel)
})

// FuzzAbsolute runs Add of every runnable variant of transformer_base
// (sinusoidal, table below MaxLen and exact rows elsewhere) and bert_base
// (learned table) on fuzzed token counts (0…4097), positions (sinusoidal:
// the whole int32 range, negative included, PE being the formula there;
// learned: rows of the table, plus out-of-range positions that must panic
// naming pos[t] before anything is written) and inputs holding ±0,
// subnormals, ±Inf and NaN, against verify.AbsoluteAdd / LearnedAdd: finite
// results within 2e-6·max(1, |ref|) (docs/design), NaN in → NaN out and an
// infinity kept, element by element. Encode of the first position is
// checked against verify.AbsoluteEncoding too.
func FuzzAbsolute(f *testing.F) {
	f.Add(uint8(0), uint16(3), int32(0), int32(1), uint8(0), uint64(1), []byte{})
	f.Add(uint8(1), uint16(5), int32(510), int32(1), uint8(0), uint64(2), []byte{0, 0, 12, 0, 9, 10})
	f.Add(uint8(1), uint16(2), int32(512), int32(1), uint8(7), uint64(3), []byte{})
	s := make([]*spec.Spec, len(absPkgs))
	for i, p := range absPkgs {
		s[i] = zooSpec(f, p.name)
	}
	f.Fuzz(func(t *testing.T, pkg uint8, tokens uint16, start, stride int32, mode uint8, seed uint64, recipe []byte) {
		p, sp := absPkgs[int(pkg)%len(absPkgs)], s[int(pkg)%len(absPkgs)]
		r := rand.New(rand.NewPCG(seed, uint64(pkg)))
		n := count(tokens)
		pos := positions(r, n, mode, start, stride, p.maxLen)
		x := randomValues(r, n*p.dModel)
		plant(x, recipe)
		var table []float32
		var want []float64
		if p.learned {
			table = learnedTable()
			bad := -1
			for t := range pos {
				if mode%8 != 7 { // keep the raw positions one time in 8
					pos[t] = int32(uint32(pos[t]) % uint32(p.maxLen))
				}
				if bad < 0 && (pos[t] < 0 || int(pos[t]) >= p.maxLen) {
					bad = t
				}
			}
			if bad >= 0 {
				p.reg.each(t, func(v string) {
					y := append([]float32(nil), x...)
					e := catch(func() { p.add(y, table, pos) })
					if msg := fmt.Sprint(e); e == nil || !strings.Contains(msg, fmt.Sprintf("pos[%d]", bad)) {
						t.Fatalf("%s %s Add with pos[%d] = %d: panic %v, want one naming pos[%d]", p.name, v, bad, pos[bad], e, bad)
					}
					if !sameBits(y, x) {
						t.Fatalf("%s %s Add with pos[%d] = %d wrote x before panicking", p.name, v, bad, pos[bad])
					}
				})
				return
			}
			want = verify.LearnedAdd(sp, x, table, pos)
		} else {
			want = verify.AbsoluteAdd(sp, x, pos)
		}
		p.reg.each(t, func(v string) {
			y := append([]float32(nil), x...)
			p.add(y, table, pos)
			for k, w := range want {
				g := float64(y[k])
				ok := true
				switch {
				case math.IsNaN(w):
					ok = math.IsNaN(g)
				case math.IsInf(w, 0):
					ok = g == w
				case math.Abs(w) < math.MaxFloat32:
					ok = math.Abs(g-w) <= 2e-6*math.Max(1, math.Abs(w))
				}
				if !ok {
					t.Fatalf("%s %s Add: token %d (pos %d) dim %d: x = %g, got %g, want %g",
						p.name, v, k/p.dModel, pos[k/p.dModel], k%p.dModel, x[k], g, w)
				}
			}
		})
		if p.encode != nil && n > 0 {
			dst := make([]float32, p.dModel)
			p.encode(dst, int(pos[0]))
			for i, w := range verify.AbsoluteEncoding(sp, int(pos[0])) {
				if !(math.Abs(float64(dst[i])-w) <= 2e-6*math.Max(1, math.Abs(w))) {
					t.Fatalf("%s Encode(pos %d) dim %d: got %g, want %g", p.name, pos[0], i, dst[i], w)
				}
			}
		}
	})
}
