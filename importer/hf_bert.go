package importer

import "github.com/posenc/posenc/spec"

// hfBERT imports BERT: BertConfig(hidden_size, max_position_embeddings,
// position_embedding_type="absolute"). Absolute embeddings are a learned
// [max_position_embeddings][hidden_size] table indexed from position 0;
// relative_key / relative_key_query add Shaw-style terms that posenc's
// learned encoding does not express.
func hfBERT(cfg obj, d *doc) error {
	pet := "absolute"
	if cfg.has("position_embedding_type") {
		var err error
		if pet, err = cfg.str("position_embedding_type"); err != nil {
			return err
		}
	}
	switch pet {
	case "absolute":
	case "relative_key", "relative_key_query":
		return cfg.errf("position_embedding_type", "%s (relative position embeddings inside attention) is not supported; posenc imports BERT's absolute embeddings only", quoteInput(pet))
	default:
		return cfg.errf("position_embedding_type", "unknown value %s; BERT defines absolute, relative_key and relative_key_query", quoteInput(pet))
	}
	for _, k := range []string{"hidden_size", "max_position_embeddings"} {
		if !cfg.has(k) {
			return cfg.errf(k, "required for a learned absolute position table")
		}
	}
	dm, err := cfg.integer("hidden_size", 1)
	if err != nil {
		return err
	}
	ml, err := cfg.integer("max_position_embeddings", 1)
	if err != nil {
		return err
	}
	if dm > spec.MaxDim {
		return cfg.errf("hidden_size", "%d exceeds %d", dm, spec.MaxDim)
	}
	d.note("learned absolute position embeddings (position_embedding_type absolute): a [max_position_embeddings %d][hidden_size %d] table given at run time", ml, dm)
	d.set("encoding", spec.Learned)
	d.setInt("d_model", dm)
	d.setInt("max_len", ml)
	return nil
}
