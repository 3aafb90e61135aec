package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Encodings lists every encoding name, in the order docs/spec.md and
// docs/design list them.
var Encodings = []string{RoPE, ALiBi, RPEBias, Sinusoidal, Learned, Algebraic, Binary, Mixture, RPEFull, XL}

// ScalingTypes lists every RoPE scaling type.
var ScalingTypes = []string{ScaleLinear, ScaleNTK, ScaleDynamic, ScaleYaRN, ScaleLlama3, ScaleLongRoPE}

// DTypes lists the storage types a spec may ask for.
var DTypes = []string{"f32", "f16", "bf16"}

// commonKeys are allowed for every encoding.
var commonKeys = []string{"name", "encoding", "targets", "dtype"}

// encodingKeys are the keys, beyond commonKeys, that belong to each encoding.
var encodingKeys = map[string][]string{
	RoPE:       {"head_dim", "rotary_dim", "layout", "base", "max_position", "scaling"},
	ALiBi:      {"heads", "max_bias", "slopes", "causal"},
	RPEBias:    {"heads", "r_max", "buckets"},
	Sinusoidal: {"d_model", "max_len", "base"},
	Learned:    {"d_model", "max_len"},
	Algebraic:  {"d_model", "max_len"},
	Binary:     {"d_model", "max_len"},
	Mixture:    {"d_model", "max_len"},
	RPEFull:    {"head_dim", "r_max"},
	XL:         {"head_dim", "base"},
}

// allTopKeys is every key a spec may have at the top level, for some encoding.
var allTopKeys = []string{
	"name", "encoding", "targets", "dtype",
	"head_dim", "rotary_dim", "layout", "base", "max_position", "scaling",
	"heads", "max_bias", "slopes", "causal", "r_max", "buckets",
	"d_model", "max_len",
}

// scalingKeys are the keys, beyond "type" and "factor", each scaling type uses.
var scalingKeys = map[string][]string{
	ScaleLinear:   nil,
	ScaleNTK:      nil,
	ScaleDynamic:  {"original_max_position"},
	ScaleYaRN:     {"original_max_position", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor", "truncate"},
	ScaleLlama3:   {"original_max_position", "low_freq_factor", "high_freq_factor"},
	ScaleLongRoPE: {"original_max_position", "attention_factor", "short_factor", "long_factor"},
}

// allScalingKeys is every key a scaling mapping may have, for some type.
var allScalingKeys = []string{
	"type", "factor", "original_max_position", "low_freq_factor", "high_freq_factor",
	"beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor",
	"truncate", "short_factor", "long_factor",
}

// bucketKeys are the keys of an rpe_bias buckets mapping.
var bucketKeys = []string{"num", "max_distance", "bidirectional"}

// Load reads the spec file at path and parses it with Parse, using path as
// the file name in errors and in Spec.File.
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse decodes the single YAML document in data into a Spec, applies every
// default and checks every rule. file names the source in errors and becomes
// Spec.File; data becomes Spec.Source. Problems with the content are
// reported as an *Error naming the file, line and field.
func Parse(file string, data []byte) (s *Spec, err error) {
	defer func() {
		// yaml.v3 reports its own failures as errors; anything else
		// escaping it is still a problem with the input, not the caller.
		if r := recover(); r != nil {
			s, err = nil, &Error{File: file, Msg: fmt.Sprintf("YAML decoder failure: %v", r)}
		}
	}()
	d := &decoder{file: file, lines: map[string]int{}}
	root := d.document(data)
	if d.err != nil {
		return nil, d.err
	}
	s = d.spec(root)
	if d.err != nil {
		return nil, d.err
	}
	d.validate(s)
	if d.err != nil {
		return nil, d.err
	}
	s.File = file
	s.Source = string(data)
	return s, nil
}

// decoder walks the YAML node tree, remembering the first error and the line
// of every field it has seen.
type decoder struct {
	file     string
	err      *Error
	rootLine int
	// lines maps the path of every field present in the document
	// ("head_dim", "scaling.factor", "slopes[2]") to the line of its value;
	// for nested mappings the line of their key.
	lines map[string]int
}

// fail records an error unless one is already recorded: the first problem
// found is the one reported.
func (d *decoder) fail(line int, field, format string, args ...any) {
	if d.err == nil {
		d.err = &Error{File: d.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
}

// has reports whether the field at path was present in the document.
func (d *decoder) has(path string) bool {
	_, ok := d.lines[path]
	return ok
}

// line returns the line of a present field, or for a missing one the line of
// the mapping that should hold it.
func (d *decoder) line(path string) int {
	if l, ok := d.lines[path]; ok {
		return l
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return d.line(path[:i])
	}
	return d.rootLine
}

// yamlLine matches the position prefix of yaml.v3's syntax errors.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError turns an error from yaml.v3 into an *Error with its line.
func (d *decoder) yamlError(err error) {
	msg := err.Error()
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = "YAML syntax: " + m[2]
	} else {
		msg = "YAML syntax: " + strings.TrimPrefix(msg, "yaml: ")
	}
	d.fail(line, "", "%s", msg)
}

// document parses data and returns the content node of its only document.
func (d *decoder) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.fail(1, "", "empty spec: expected a mapping with at least name and encoding")
		} else {
			d.yamlError(err)
		}
		return nil
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		d.yamlError(err)
		return nil
	default:
		line := next.Line
		if len(next.Content) > 0 {
			line = next.Content[0].Line
		}
		d.fail(line, "", "more than one YAML document; a spec file holds exactly one")
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		d.fail(doc.Line, "", "empty spec: expected a mapping with at least name and encoding")
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		d.fail(root.Line, "", "a spec must be a mapping of keys to values, got %s", describe(root))
		return nil
	}
	return root
}

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

// spec decodes the top-level mapping. Fields are decoded in document order,
// so the first type error reported is the first in the file.
func (d *decoder) spec(root *yaml.Node) *Spec {
	d.rootLine = root.Line
	m := d.mapping(root, "")
	if m == nil {
		return nil
	}
	s := &Spec{}
	encNode, ok := m.vals["encoding"]
	if !ok {
		d.fail(d.rootLine, "encoding", "required; %s", oneOf(Encodings))
		return nil
	}
	s.Encoding = d.str(encNode, "encoding")
	if d.err != nil {
		return nil
	}
	if !contains(Encodings, s.Encoding) {
		d.fail(encNode.Line, "encoding", "unknown encoding %q; %s", s.Encoding, oneOf(Encodings))
		return nil
	}
	allowed := append(append([]string(nil), commonKeys...), encodingKeys[s.Encoding]...)
	if !d.checkKeys(m, allowed, allTopKeys, "encoding "+s.Encoding) {
		return nil
	}
	for _, k := range m.keys {
		v, key := m.vals[k.Value], k.Value
		switch key {
		case "name":
			s.Name = d.str(v, key)
		case "encoding":
		case "targets":
			s.Targets = d.targets(v, key)
		case "dtype":
			s.DType = d.str(v, key)
		case "head_dim":
			s.HeadDim = d.integer(v, key)
		case "rotary_dim":
			s.RotaryDim = d.integer(v, key)
		case "layout":
			s.Layout = d.str(v, key)
		case "base":
			s.Base = d.number(v, key)
		case "max_position":
			s.MaxPosition = d.integer(v, key)
		case "scaling":
			d.lines[key] = k.Line
			s.Scaling = d.scaling(v)
		case "heads":
			s.Heads = d.integer(v, key)
		case "max_bias":
			s.MaxBias = d.number(v, key)
		case "slopes":
			s.Slopes = d.numbers(v, key)
		case "causal":
			s.Causal = d.boolean(v, key)
		case "r_max":
			s.RMax = d.integer(v, key)
		case "buckets":
			d.lines[key] = k.Line
			s.Buckets = d.buckets(v)
		case "d_model":
			s.DModel = d.integer(v, key)
		case "max_len":
			s.MaxLen = d.integer(v, key)
		}
		if d.err != nil {
			return nil
		}
	}
	return s
}

// targets decodes the target list: known names, each at most once, stored in
// the canonical AllTargets order.
func (d *decoder) targets(n *yaml.Node, path string) []string {
	items := d.list(n, path, "target names")
	if d.err != nil {
		return nil
	}
	if len(items) == 0 {
		d.fail(n.Line, path, "must name at least one target; %s", oneOf(AllTargets))
		return nil
	}
	seen := map[string]bool{}
	for i, it := range items {
		p := fmt.Sprintf("%s[%d]", path, i)
		t := d.str(it, p)
		if d.err != nil {
			return nil
		}
		if !contains(AllTargets, t) {
			d.fail(it.Line, p, "unknown target %q; %s", t, oneOf(AllTargets))
			return nil
		}
		if seen[t] {
			d.fail(it.Line, p, "target %q is listed twice", t)
			return nil
		}
		seen[t] = true
	}
	var out []string
	for _, t := range AllTargets {
		if seen[t] {
			out = append(out, t)
		}
	}
	return out
}

// scaling decodes the RoPE scaling mapping; which keys are allowed depends
// on its type.
func (d *decoder) scaling(n *yaml.Node) *Scaling {
	m := d.mapping(n, "scaling")
	if m == nil {
		return nil
	}
	sc := &Scaling{}
	tn, ok := m.vals["type"]
	if !ok {
		d.fail(d.line("scaling"), "scaling.type", "required; %s", oneOf(ScalingTypes))
		return nil
	}
	sc.Type = d.str(tn, "scaling.type")
	if d.err != nil {
		return nil
	}
	extra, ok := scalingKeys[sc.Type]
	if !ok {
		d.fail(tn.Line, "scaling.type", "unknown scaling type %q; %s", sc.Type, oneOf(ScalingTypes))
		return nil
	}
	allowed := append([]string{"type", "factor"}, extra...)
	if !d.checkKeys(m, allowed, allScalingKeys, "scaling type "+sc.Type) {
		return nil
	}
	for _, k := range m.keys {
		v, path := m.vals[k.Value], m.field(k.Value)
		switch k.Value {
		case "type":
		case "factor":
			sc.Factor = d.number(v, path)
		case "original_max_position":
			sc.OriginalMaxPosition = d.integer(v, path)
		case "low_freq_factor":
			sc.LowFreqFactor = d.number(v, path)
		case "high_freq_factor":
			sc.HighFreqFactor = d.number(v, path)
		case "beta_fast":
			sc.BetaFast = d.number(v, path)
		case "beta_slow":
			sc.BetaSlow = d.number(v, path)
		case "mscale":
			sc.Mscale, sc.HasMscale = d.number(v, path), true
		case "mscale_all_dim":
			sc.MscaleAllDim, sc.HasMscaleAllDim = d.number(v, path), true
		case "attention_factor":
			sc.AttentionFactor, sc.HasAttentionFactor = d.number(v, path), true
		case "truncate":
			sc.Truncate = d.boolean(v, path)
		case "short_factor":
			sc.ShortFactor = d.numbers(v, path)
		case "long_factor":
			sc.LongFactor = d.numbers(v, path)
		}
		if d.err != nil {
			return nil
		}
	}
	return sc
}

// buckets decodes the T5 bucketing mapping of rpe_bias.
func (d *decoder) buckets(n *yaml.Node) *Buckets {
	m := d.mapping(n, "buckets")
	if m == nil || !d.checkKeys(m, bucketKeys, bucketKeys, "buckets") {
		return nil
	}
	b := &Buckets{}
	for _, k := range m.keys {
		v, path := m.vals[k.Value], m.field(k.Value)
		switch k.Value {
		case "num":
			b.Num = d.integer(v, path)
		case "max_distance":
			b.MaxDistance = d.integer(v, path)
		case "bidirectional":
			b.Bidirectional = d.boolean(v, path)
		}
		if d.err != nil {
			return nil
		}
	}
	return b
}
