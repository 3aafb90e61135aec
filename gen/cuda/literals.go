package cuda

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DoubleLit formats v as a C double literal that round-trips exactly.
func DoubleLit(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		panic(fmt.Sprintf("cuda: non-finite constant %v", v))
	}
	t := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(t, ".e") {
		t += ".0"
	}
	return t
}

// Doubles formats a slice with DoubleLit.
func Doubles(v []float64) []string {
	o := make([]string, len(v))
	for i, x := range v {
		o[i] = DoubleLit(x)
	}
	return o
}

// Float32Lit formats v rounded to float32 as a C float literal that
// round-trips exactly.
func Float32Lit(v float64) string {
	f := float32(v)
	if math.IsInf(float64(f), 0) || math.IsNaN(float64(f)) {
		panic(fmt.Sprintf("cuda: non-finite constant %v", v))
	}
	t := strconv.FormatFloat(float64(f), 'g', -1, 32)
	if !strings.ContainsAny(t, ".e") {
		t += ".0"
	}
	return t + "f"
}
