package importer

import (
	"io"
	"sort"
	"strings"

	"github.com/posenc/posenc/spec"
)

// Which pairs llama.cpp rotates, per GGUF general.architecture, from
// llama.cpp src/llama-model.cpp llama_model_rope_type():
//
//   - LLAMA_ROPE_TYPE_NORM ("normal") rotates consecutive pairs (2i, 2i+1).
//     convert_hf_to_gguf.py permutes the Q and K weights of these models
//     (LlamaModel.permute) so that Hugging Face's rotate_half pairs
//     (i, i+R/2) land next to each other. Against the tensors stored in the
//     GGUF file the rotation is therefore interleaved, and that is the
//     layout posenc must use to rotate queries and keys computed from them.
//   - LLAMA_ROPE_TYPE_NEOX rotates (i, i+R/2) on unpermuted weights: half.
//
// Architectures missing from both lists (MROPE/IMROPE multimodal RoPE,
// per-layer bases, architectures without RoPE that are not handled below)
// are refused rather than guessed.
var ggufNormArch = map[string]bool{
	"llama": true, "deci": true, "baichuan": true, "plamo": true, "orion": true,
	"internlm2": true, "minicpm": true, "xverse": true, "command-r": true,
	"cohere2": true, "olmo": true, "arctic": true, "deepseek": true,
	"granite": true, "granitemoe": true, "chameleon": true,
}

var ggufNeoxArch = map[string]bool{
	"falcon": true, "grok": true, "dbrx": true, "stablelm": true, "bitnet": true,
	"qwen": true, "qwen2": true, "qwen2moe": true, "qwen3": true, "qwen3moe": true,
	"olmo2": true, "olmoe": true, "phi2": true, "phi3": true, "phimoe": true,
	"gemma": true, "gemma2": true, "starcoder2": true, "gptneox": true,
	"codeshell": true, "nemotron": true, "exaone": true,
}

// ggufRefusedArch explains architectures that use RoPE in a way one spec
// cannot describe.
var ggufRefusedArch = map[string]string{
	"gemma3":    "sliding-window layers use a second RoPE base (10000, hard-coded in llama.cpp) besides rope.freq_base",
	"qwen2vl":   "multimodal RoPE (LLAMA_ROPE_TYPE_MROPE) rotates sections by separate position ids",
	"deepseek2": "multi-head latent attention rotates a separate RoPE sub-head with YaRN log-multiplier scaling",
	"llama4":    "some layers use no RoPE and others chunked attention",
}

// FromGGUF converts the metadata header of a GGUF file (ggml docs/gguf.md,
// versions 2 and 3) into posenc spec YAML named name. It reads the header
// up to and including the tensor infos and never the tensor data, so r
// may be a file, a pipe or the first megabytes of a download. RoPE
// architectures become rope specs with the layout llama.cpp uses for the
// stored tensors (see ggufNormArch); bloom and mpt become ALiBi, t5 and
// t5encoder the T5 bucketed bias, bert learned absolute embeddings. The
// YAML starts with "# imported from GGUF metadata (general.architecture X)".
func FromGGUF(name string, r io.Reader) ([]byte, error) {
	if err := checkName(ggufSource, name); err != nil {
		return nil, err
	}
	h, err := readGGUFHeader(r)
	if err != nil {
		return nil, err
	}
	av, ok := h.kv["general.architecture"]
	if !ok {
		return nil, ggufErr("general.architecture", "required: the model architecture")
	}
	arch, ok := av.(string)
	if !ok || arch == "" {
		return nil, ggufErr("general.architecture", "must be a non-empty string, got %s", ggufKind(av))
	}
	m := ggufMeta{h: h, arch: arch}
	d := &doc{}
	d.note("imported from GGUF metadata (general.architecture %s)", arch)
	d.set("name", name)
	switch {
	case arch == "bloom" || arch == "mpt":
		err = ggufALiBi(m, d)
	case arch == "t5" || arch == "t5encoder":
		err = ggufT5(m, d)
	case arch == "bert":
		err = ggufBERT(m, d)
	case ggufNormArch[arch]:
		err = ggufRoPE(m, spec.LayoutInterleaved, d)
	case ggufNeoxArch[arch]:
		err = ggufRoPE(m, spec.LayoutHalf, d)
	case ggufRefusedArch[arch] != "":
		err = ggufErr("general.architecture", "%s is not supported: %s", quoteInput(arch), ggufRefusedArch[arch])
	default:
		err = ggufErr("general.architecture", "unsupported architecture %s; supported: %s", quoteInput(arch), ggufSupported())
	}
	if err != nil {
		return nil, err
	}
	return finish(ggufSource, name, d)
}

// ggufSupported lists the architectures FromGGUF accepts, sorted.
func ggufSupported() string {
	names := []string{"bert", "bloom", "mpt", "t5", "t5encoder"}
	for k := range ggufNormArch {
		names = append(names, k)
	}
	for k := range ggufNeoxArch {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// ggufHeads reads <arch>.attention.head_count (a scalar; per-layer arrays
// are refused).
func ggufHeads(m ggufMeta) (int, error) {
	if !m.has("attention.head_count") {
		return 0, ggufErr(m.key("attention.head_count"), "required: the number of attention heads")
	}
	return m.integerIn("attention.head_count", 1, maxHeads)
}
