package plot

import (
	"fmt"
	"math"
	"strconv"

	gonum "gonum.org/v1/plot"
)

// logTicks marks a logarithmic axis: a labelled tick at every power of ten
// (computed exactly with math.Pow10, so labels read "0.001", not
// gonum.LogTicks's accumulated "9.999999999999999e-05") and unlabelled ones
// at 2…9 times it.
type logTicks struct{}

// Ticks returns the ticks for the range [lo, hi], lo > 0.
func (logTicks) Ticks(lo, hi float64) []gonum.Tick {
	var ts []gonum.Tick
	for k := int(math.Floor(math.Log10(lo))); k <= int(math.Ceil(math.Log10(hi))); k++ {
		v := math.Pow10(k)
		ts = append(ts, gonum.Tick{Value: v, Label: powerLabel(k)})
		for m := 2; m < 10; m++ {
			ts = append(ts, gonum.Tick{Value: float64(m) * v})
		}
	}
	return ts
}

// powerLabel writes 10^k plainly for |k| ≤ 4 and as 1eK otherwise.
func powerLabel(k int) string {
	if k >= -4 && k <= 4 {
		return strconv.FormatFloat(math.Pow10(k), 'f', -1, 64)
	}
	return fmt.Sprintf("1e%d", k)
}

// plainTicks are gonum's default linear ticks with labels in the shortest
// form that reads back as the value ("250", not "250.00").
type plainTicks struct{}

// Ticks returns the ticks for the range [lo, hi].
func (plainTicks) Ticks(lo, hi float64) []gonum.Tick {
	ts := gonum.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 6, 64)
		}
	}
	return ts
}
