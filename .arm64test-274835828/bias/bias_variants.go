package bias

type kernels struct {
	addRow func(dst, src []float32)
	softmaxRow func(row, bias []float32, scale float32)
	softmaxRamp func(row []float32, scale, nslope, t0 float32)
	addRamp func(dst []float32, nslope, t0 float64)
	scoresKV func(s, q, k []float32, nk, nb, groups, grp, kStride, sStride int)
	valuesKV func(acc, p, v, alpha []float32, nk, nb, groups, grp, vStride, pStride int)
	expShift func(row []float32, m float32, sum []float32)
	maxRow func(row, m []float32)
}

var registered = map[string]kernels{}

func registerVariant(name string, available bool, k kernels) {
	if !available {
		panic("variant " + name + " not available")
	}
	registered[name] = k
}
