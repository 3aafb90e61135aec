package spec

import (
	"bytes"
	"fmt"
)

// MaxYAMLNodes bounds the YAML nodes a spec file may hold, counted before
// the YAML parser runs. yaml.v3 builds a node tree of some hundred bytes
// per node, so a 60 MiB list of one-character entries took minutes and
// over 6 GiB; a spec needs some thousands at most (two longrope factor
// lists of 512 entries, 256 slopes). docs/spec.md, "Input files".
const MaxYAMLNodes = 1 << 16

// yamlNodeBound is an upper bound on the nodes yaml.v3 makes of data: every
// node but a document's root follows one of the indicators '-' (a block
// list entry), ':' and '?' (a key, two nodes), ',' (a flow entry, two
// nodes in a flow mapping), '[' and '{' (a flow collection). Characters of
// scalars and trailing comments are counted too, which only raises the
// bound; lines that hold only a comment are skipped (they never hold an
// indicator: inside a quoted or block scalar they are text). It returns
// the bound and the 1-based line on which it passed limit (0 when it did
// not).
func yamlNodeBound(data []byte, limit int) (n, line int) {
	n = 2 // the document and its root
	for l := 1; len(data) > 0; l++ {
		text := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			text, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if t := bytes.TrimLeft(text, " \t"); len(t) > 0 && t[0] == '#' {
			continue
		}
		for _, c := range text {
			switch c {
			case '-', '[':
				n++
			case ':', '?', ',', '{':
				n += 2
			}
		}
		if n > limit {
			return n, l
		}
	}
	return n, 0
}

// checkInput refuses data over MaxInputBytes or with more than
// MaxYAMLNodes nodes, before yaml.v3 parses it.
func (d *decoder) checkInput(data []byte) {
	if len(data) > MaxInputBytes {
		d.err = tooLarge(d.file, fmt.Sprintf("%d bytes", len(data)))
		return
	}
	if _, l := yamlNodeBound(data, MaxYAMLNodes); l > 0 {
		d.fail(l, "", "more than %d YAML nodes by this line (counting list entries, keys and the separators - : ? , [ { outside comment lines): a spec needs a few thousand at most", MaxYAMLNodes)
	}
}
