package spec

// YAML node helpers of the decoder: checked, line-recording decoding of
// single nodes (mappings, scalars, lists) and the wording of their errors.

import (
	"fmt"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"
)

// describe names what a node is, for "got ..." in messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.DocumentNode:
		return "a document"
	}
	switch n.ShortTag() {
	case "!!null":
		return "null"
	case "!!str":
		return fmt.Sprintf("the string %q", n.Value)
	case "!!int":
		return "the integer " + n.Value
	case "!!float":
		return "the number " + n.Value
	case "!!bool":
		return "the boolean " + n.Value
	}
	return fmt.Sprintf("%s %q", n.ShortTag(), n.Value)
}

// plain rejects anchors and aliases, which a spec never needs.
func (d *decoder) plain(n *yaml.Node, path string) bool {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		d.fail(n.Line, path, "YAML anchors and aliases are not allowed in a spec")
		return false
	}
	return true
}

// mapping is one decoded YAML mapping with its keys checked.
type mapping struct {
	path string                // "" for the top level
	keys []*yaml.Node          // key nodes in document order
	vals map[string]*yaml.Node // value node per key
}

// field returns the path of key inside m.
func (m *mapping) field(key string) string {
	if m.path == "" {
		return key
	}
	return m.path + "." + key
}

// mapping checks that n is a mapping with plain, distinct string keys.
func (d *decoder) mapping(n *yaml.Node, path string) *mapping {
	if !d.plain(n, path) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, path, "must be a mapping, got %s", describe(n))
		return nil
	}
	m := &mapping{path: path, vals: map[string]*yaml.Node{}}
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !d.plain(k, path) {
			return nil
		}
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			d.fail(k.Line, path, "keys must be plain words, got %s", describe(k))
			return nil
		}
		if l, dup := first[k.Value]; dup {
			d.fail(k.Line, m.field(k.Value), "duplicate key (first given at line %d)", l)
			return nil
		}
		first[k.Value] = k.Line
		m.keys = append(m.keys, k)
		m.vals[k.Value] = v
	}
	return m
}

// checkKeys rejects keys of m that are not in allowed; known lists every key
// that is valid in some context, to tell "unknown" from "does not apply".
func (d *decoder) checkKeys(m *mapping, allowed, known []string, context string) bool {
	for _, k := range m.keys {
		if contains(allowed, k.Value) {
			continue
		}
		if contains(known, k.Value) {
			d.fail(k.Line, m.field(k.Value), "does not apply to %s; allowed keys: %s", context, strings.Join(allowed, ", "))
		} else {
			d.fail(k.Line, m.field(k.Value), "unknown key; allowed keys for %s: %s", context, strings.Join(allowed, ", "))
		}
		return false
	}
	return true
}

// contains reports whether list holds s.
func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// oneOf formats the choices of an enumerated field.
func oneOf(list []string) string {
	return "one of " + strings.Join(list, ", ")
}

// scalar checks that n is a plain scalar and records its line under path.
func (d *decoder) scalar(n *yaml.Node, path, want string) bool {
	if !d.plain(n, path) {
		return false
	}
	d.lines[path] = n.Line
	if n.Kind != yaml.ScalarNode {
		d.fail(n.Line, path, "must be %s, got %s", want, describe(n))
		return false
	}
	return true
}

// str decodes a string scalar.
func (d *decoder) str(n *yaml.Node, path string) string {
	if !d.scalar(n, path, "a string") {
		return ""
	}
	if n.ShortTag() != "!!str" {
		d.fail(n.Line, path, "must be a string, got %s", describe(n))
		return ""
	}
	return n.Value
}

// integer decodes an integer scalar (a float such as 64.0 or 64.5 is
// rejected).
func (d *decoder) integer(n *yaml.Node, path string) int {
	if !d.scalar(n, path, "an integer") {
		return 0
	}
	if n.ShortTag() != "!!int" {
		d.fail(n.Line, path, "must be an integer, got %s", describe(n))
		return 0
	}
	var v int64
	if err := n.Decode(&v); err != nil || int64(int(v)) != v {
		d.fail(n.Line, path, "cannot read %q as a 64-bit integer", n.Value)
		return 0
	}
	return int(v)
}

// number decodes a finite real number (an integer or a float).
func (d *decoder) number(n *yaml.Node, path string) float64 {
	if !d.scalar(n, path, "a number") {
		return 0
	}
	if t := n.ShortTag(); t != "!!int" && t != "!!float" {
		d.fail(n.Line, path, "must be a number, got %s", describe(n))
		return 0
	}
	var v float64
	if err := n.Decode(&v); err != nil {
		d.fail(n.Line, path, "cannot read %q as a number", n.Value)
		return 0
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		d.fail(n.Line, path, "must be a finite number, got %s", n.Value)
		return 0
	}
	return v
}

// boolean decodes true or false.
func (d *decoder) boolean(n *yaml.Node, path string) bool {
	if !d.scalar(n, path, "true or false") {
		return false
	}
	if n.ShortTag() != "!!bool" {
		d.fail(n.Line, path, "must be true or false, got %s", describe(n))
		return false
	}
	var v bool
	if err := n.Decode(&v); err != nil {
		d.fail(n.Line, path, "must be true or false, got %s", describe(n))
	}
	return v
}

// list checks that n is a sequence and records its line under path.
func (d *decoder) list(n *yaml.Node, path, want string) []*yaml.Node {
	if !d.plain(n, path) {
		return nil
	}
	d.lines[path] = n.Line
	if n.Kind != yaml.SequenceNode {
		d.fail(n.Line, path, "must be a list of %s, got %s", want, describe(n))
		return nil
	}
	return n.Content
}

// numbers decodes a list of finite numbers.
func (d *decoder) numbers(n *yaml.Node, path string) []float64 {
	items := d.list(n, path, "numbers")
	if items == nil {
		return nil
	}
	out := make([]float64, len(items))
	for i, it := range items {
		out[i] = d.number(it, fmt.Sprintf("%s[%d]", path, i))
	}
	return out
}
