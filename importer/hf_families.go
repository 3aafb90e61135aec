package importer

// RoPE model families: per config.json model_type, the keys, class defaults
// and rotation layout of its transformers implementation.

import "github.com/posenc/posenc/spec"

// ropeFamily describes how one Hugging Face model type stores its rotary
// embedding in config.json. Field names and class defaults come from
// transformers' models/<type>/configuration_<type>.py; the layout from the
// model's modeling_<type>.py (rotate_half ⇒ half, rotate_every_two ⇒
// interleaved).
type ropeFamily struct {
	source     string   // configuration file the defaults come from
	layout     string   // spec.LayoutHalf or spec.LayoutInterleaved
	layoutWhy  string   // where the layout comes from
	theta      float64  // class default rope_theta
	thetaKeys  []string // config keys holding rope_theta, first wins
	hiddenKeys []string // hidden_size and its aliases
	headsKeys  []string // num_attention_heads and its aliases
	maxPosKeys []string // max_position_embeddings and its aliases
	// partialKeys hold the fraction of head_dim that rotates
	// (partial_rotary_factor; GPT-NeoX's rotary_pct); partial is the class
	// default when none is present.
	partialKeys []string
	partial     float64
	// rotaryDimKey is GPT-J's absolute rotary_dim (null = the whole head).
	rotaryDimKey string
	// noScaling marks models whose HF implementation has no rope_scaling.
	noScaling bool

	// The fields below serve the model types of hf_multi.go, whose one
	// config yields several specs or whose rotary sub-head is not head_dim.

	// headDimKey, when set, holds the rotary head size and takes the place
	// of head_dim (DeepSeek's qk_rope_head_dim); headDim is the class
	// default head_dim used when the config has neither (Gemma 3: 256).
	headDimKey string
	headDim    int
	// handles are rejectedKeys this family's importer accounts for.
	handles []string
	// dropScaling, when set, says why the config's rope_scaling does not
	// apply to this spec (Gemma 3's sliding-window layers).
	dropScaling string
	// layerType names the transformers-5 per-layer-type rope_parameters
	// entry ("sliding_attention", "full_attention") this spec uses, when
	// rope_parameters is keyed by layer type.
	layerType string
}

// Common config.json key lists.
var (
	llamaHidden = []string{"hidden_size"}
	llamaHeads  = []string{"num_attention_heads"}
	llamaMaxPos = []string{"max_position_embeddings"}
	llamaTheta  = []string{"rope_theta"}
	llamaPart   = []string{"partial_rotary_factor"}
)

// llamaLike is a RoPE family laid out like Llama: rotate_half, rope_theta,
// hidden_size / num_attention_heads, rope_scaling via modeling_rope_utils.
func llamaLike(model string, theta, partial float64) *ropeFamily {
	return &ropeFamily{
		source:      "transformers models/" + model + "/configuration_" + model + ".py",
		layout:      spec.LayoutHalf,
		layoutWhy:   "modeling_" + model + ".py applies rotate_half: pairs (i, i+R/2)",
		theta:       theta,
		thetaKeys:   llamaTheta,
		hiddenKeys:  llamaHidden,
		headsKeys:   llamaHeads,
		maxPosKeys:  llamaMaxPos,
		partialKeys: llamaPart,
		partial:     partial,
	}
}

// ropeFamilies maps config.json model_type to its RoPE description.
var ropeFamilies = map[string]*ropeFamily{
	"llama":      llamaLike("llama", 10000, 1),
	"mistral":    llamaLike("mistral", 10000, 1),
	"mixtral":    llamaLike("mixtral", 1e6, 1), // MixtralConfig(rope_theta=1e6)
	"qwen2":      llamaLike("qwen2", 10000, 1),
	"qwen2_moe":  llamaLike("qwen2_moe", 10000, 1),
	"qwen3":      llamaLike("qwen3", 10000, 1),
	"qwen3_moe":  llamaLike("qwen3_moe", 10000, 1),
	"phi3":       llamaLike("phi3", 10000, 1),
	"phi":        llamaLike("phi", 10000, 0.5),       // PhiConfig(partial_rotary_factor=0.5)
	"stablelm":   llamaLike("stablelm", 10000, 0.25), // StableLmConfig(partial_rotary_factor=0.25)
	"gemma":      llamaLike("gemma", 10000, 1),
	"gemma2":     llamaLike("gemma2", 10000, 1),
	"starcoder2": llamaLike("starcoder2", 10000, 1),
	"olmo":       llamaLike("olmo", 10000, 1),
	"olmo2":      llamaLike("olmo2", 10000, 1),
	// GptOssConfig(rope_theta=150000.0); modeling_gpt_oss.py's
	// _apply_rotary_emb splits the head with torch.chunk(x, 2): half.
	"gpt_oss": llamaLike("gpt_oss", 150000, 1),
	"falcon":  falconFamily,
	// GPTNeoXConfig(rotary_pct=0.25, rotary_emb_base=10000); newer
	// transformers name them partial_rotary_factor and rope_theta.
	"gpt_neox": {
		source:      "transformers models/gpt_neox/configuration_gpt_neox.py",
		layout:      spec.LayoutHalf,
		layoutWhy:   "modeling_gpt_neox.py applies rotate_half to the first rotary_ndims dims: pairs (i, i+R/2)",
		theta:       10000,
		thetaKeys:   []string{"rope_theta", "rotary_emb_base"},
		hiddenKeys:  llamaHidden,
		headsKeys:   llamaHeads,
		maxPosKeys:  llamaMaxPos,
		partialKeys: []string{"partial_rotary_factor", "rotary_pct"},
		partial:     0.25,
	},
	// GPTJConfig(n_embd, n_head, n_positions, rotary_dim=64), attribute_map
	// hidden_size→n_embd, num_attention_heads→n_head,
	// max_position_embeddings→n_positions; modeling_gptj.py uses
	// rotate_every_two and a fixed base of 10000.
	"gptj": {
		source:       "transformers models/gptj/configuration_gptj.py",
		layout:       spec.LayoutInterleaved,
		layoutWhy:    "modeling_gptj.py applies rotate_every_two: pairs (2i, 2i+1)",
		theta:        10000,
		hiddenKeys:   []string{"n_embd", "hidden_size"},
		headsKeys:    []string{"n_head", "num_attention_heads"},
		maxPosKeys:   []string{"n_positions", "max_position_embeddings"},
		rotaryDimKey: "rotary_dim",
		noScaling:    true,
	},
}

// falconFamily is Falcon's rotary variant (FalconConfig(alibi=False,
// rope_theta=10000.0), attribute_map num_attention_heads→n_head).
var falconFamily = &ropeFamily{
	source:      "transformers models/falcon/configuration_falcon.py",
	layout:      spec.LayoutHalf,
	layoutWhy:   "modeling_falcon.py applies rotate_half: pairs (i, i+R/2)",
	theta:       10000,
	thetaKeys:   llamaTheta,
	hiddenKeys:  llamaHidden,
	headsKeys:   []string{"num_attention_heads", "n_head"},
	maxPosKeys:  llamaMaxPos,
	partialKeys: llamaPart,
	partial:     1,
}
