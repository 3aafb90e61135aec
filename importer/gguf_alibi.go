package importer

import "github.com/posenc/posenc/spec"

// ggufALiBi imports bloom and mpt. llama.cpp reads
// <arch>.attention.max_alibi_bias for MPT; for BLOOM it hard-codes
// f_max_alibi_bias = 8 (load_hparams), as BLOOM's build_alibi_tensor does.
func ggufALiBi(m ggufMeta, d *doc) error {
	heads, err := ggufHeads(m)
	if err != nil {
		return err
	}
	maxBias, from := 8.0, "llama.cpp's fixed value for BLOOM"
	if m.has("attention.max_alibi_bias") {
		if maxBias, err = m.positive("attention.max_alibi_bias"); err != nil {
			return err
		}
		from = m.key("attention.max_alibi_bias")
	} else if m.arch != "bloom" {
		return ggufErr(m.key("attention.max_alibi_bias"), "required: without it llama.cpp applies no ALiBi bias")
	}
	d.note("ALiBi, causal decoder; heads %d: %s; max_bias %s: %s", heads, m.key("attention.head_count"), fmtNum(maxBias), from)
	alibiDoc(d, heads, maxBias)
	return ggufAttnHeadDim(m, d, heads)
}

// ggufAttnHeadDim writes the optional head_dim of an alibi or rpe_bias spec
// (the head size of the attention form) as llama.cpp's load_hparams derives
// n_embd_head_k: attention.key_length, else embedding_length / head_count
// (refused with a remainder). attention.value_length, when given, must equal
// it: the attention form has one head size for q, k and v. A header with
// neither key imports without head_dim (no attention form), saying so in a
// comment.
func ggufAttnHeadDim(m ggufMeta, d *doc, heads int) error {
	var hd int
	switch {
	case m.has("attention.key_length"):
		var err error
		if hd, err = m.integerIn("attention.key_length", 1, spec.MaxAttentionHeadDim); err != nil {
			return err
		}
		d.note("head_dim %d: %s", hd, m.key("attention.key_length"))
	case m.has("embedding_length"):
		embd, err := m.integer("embedding_length", 1)
		if err != nil {
			return err
		}
		if embd%heads != 0 {
			return ggufErr(m.key("embedding_length"), "%d is not divisible by attention.head_count %d, so head_dim is undefined", embd, heads)
		}
		if hd = embd / heads; hd > spec.MaxAttentionHeadDim {
			return ggufErr(m.key("embedding_length"), "head_dim embedding_length / attention.head_count = %d exceeds %d", hd, spec.MaxAttentionHeadDim)
		}
		d.note("head_dim %d = %s %d / %s %d", hd, m.key("embedding_length"), embd, m.key("attention.head_count"), heads)
	default:
		d.note("no head_dim: the header has no %s or %s (the spec has no attention form)", m.key("attention.key_length"), m.key("embedding_length"))
		return nil
	}
	if m.has("attention.value_length") {
		v, err := m.integer("attention.value_length", 1)
		if err != nil {
			return err
		}
		if v != hd {
			return ggufErr(m.key("attention.value_length"), "%d differs from head_dim %d: the attention form takes one head size for q, k and v", v, hd)
		}
	}
	d.setInt("head_dim", hd)
	return nil
}
