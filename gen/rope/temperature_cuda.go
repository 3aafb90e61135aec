package rope

import (
	"strconv"

	"github.com/posenc/posenc/gen/cuda"
)

// temperatureCUDA is the attn_temperature part of the rope template data
// (templates/temperature.cu.tmpl).
type temperatureCUDA struct {
	Temperature  bool
	FloorScale   int
	AttnScale    string // C double literal
	AttnScaleDoc string
}

// cudaTemperature fills d's attn_temperature data and adds the launcher
// scale_q (nothing without attn_temperature).
func (c *Consts) cudaTemperature(d *cudaData) {
	a := c.Spec.AttnTemperature
	if a == nil {
		return
	}
	d.Temperature, d.FloorScale = true, a.FloorScale
	d.AttnScale, d.AttnScaleDoc = cuda.DoubleLit(a.AttnScale), strconv.FormatFloat(a.AttnScale, 'g', -1, 64)
	d.AddLauncher("scale_q", "ScaleQ: q[tokens][heads][HEAD_DIM] multiplied in place, token t by Llama 4's attention temperature log1p(floor((pos[t]+1)/floor_scale))·attn_scale + 1 (1 at a negative position).",
		d.Store+" *q", "const int *pos", "int tokens", "int heads", cuda.Stream)
}
