package importer

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
	return nil
}
