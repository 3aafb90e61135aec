package importer

import (
	"errors"
	"strings"
	"testing"
)

// TestImportRefusesSpecsGenCannotBuild: configs with huge values used to
// yield specs that crashed gen or verify; the importer's spec.Parse check
// now refuses them, naming the spec field.
func TestImportRefusesSpecsGenCannotBuild(t *testing.T) {
	for _, c := range []struct{ name, config, want string }{
		{"t5 max_distance", `{"model_type": "t5", "d_model": 512, "num_heads": 8, "relative_attention_num_buckets": 32, "relative_attention_max_distance": 2147483647}`, "buckets.max_distance"},
		{"linear factor", `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096, "rope_scaling": {"rope_type": "linear", "factor": 1e-320}}`, "scaling.factor"},
		{"yarn attention_factor", `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096, "rope_scaling": {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 4096, "attention_factor": 1e300}}`, "scaling.attention_factor"},
	} {
		out, err := FromHF("m", []byte(c.config))
		var e *Error
		if err == nil || !errors.As(err, &e) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: FromHF = %q, %v; want an *Error naming %s", c.name, out, err, c.want)
		}
	}
}
