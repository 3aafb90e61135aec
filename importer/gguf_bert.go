package importer

import "github.com/posenc/posenc/spec"

// ggufBERT imports BERT's learned absolute position embeddings
// ([context_length][embedding_length], llama.cpp's position_embd tensor).
func ggufBERT(m ggufMeta, d *doc) error {
	for _, k := range []string{"embedding_length", "context_length"} {
		if !m.has(k) {
			return ggufErr(m.key(k), "required for the learned position table")
		}
	}
	dm, err := m.integer("embedding_length", 1)
	if err != nil {
		return err
	}
	if dm > spec.MaxDim {
		return ggufErr(m.key("embedding_length"), "%d exceeds %d", dm, spec.MaxDim)
	}
	ml, err := m.integer("context_length", 1)
	if err != nil {
		return err
	}
	d.note("learned absolute position embeddings: a [context_length %d][embedding_length %d] table given at run time", ml, dm)
	d.set("encoding", spec.Learned)
	d.setInt("d_model", dm)
	d.setInt("max_len", ml)
	return nil
}
