package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// hfSource names config.json in errors.
const hfSource = "config.json"

// obj is one JSON object of a config.json with its dotted path (empty for
// the top level), so that every error names the full field.
type obj struct {
	path string
	m    map[string]any
}

// decodeConfig parses config.json into its top-level object. Numbers are
// kept as json.Number so that integers are not rounded through float64.
// Input over maxInputBytes or maxJSONValues is refused before decoding.
func decodeConfig(data []byte) (obj, error) {
	if err := checkConfigSize(data); err != nil {
		return obj{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return obj{}, &Error{Source: hfSource, Msg: fmt.Sprintf("not valid JSON: %v", err)}
	}
	if dec.More() {
		return obj{}, &Error{Source: hfSource, Msg: "trailing data after the JSON object"}
	}
	if _, err := dec.Token(); err == nil {
		return obj{}, &Error{Source: hfSource, Msg: "trailing data after the JSON object"}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return obj{}, &Error{Source: hfSource, Msg: "must be a JSON object"}
	}
	return obj{m: m}, nil
}

// field is the dotted path of key.
func (o obj) field(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

// errf is an error about key.
func (o obj) errf(key, format string, args ...any) error {
	return &Error{Source: hfSource, Field: o.field(key), Msg: fmt.Sprintf(format, args...)}
}

// has reports whether key is present with a non-null value. Python's
// PretrainedConfig treats an explicit null like the class default, and so
// do the importers.
func (o obj) has(key string) bool {
	v, ok := o.m[key]
	return ok && v != nil
}

// first returns the first of keys that is present and non-null, or "".
// Configs name some fields differently per family (configuration_*.py
// attribute_map, e.g. n_head for num_attention_heads).
func (o obj) first(keys ...string) string {
	for _, k := range keys {
		if o.has(k) {
			return k
		}
	}
	return ""
}

// num reads a finite number.
func (o obj) num(key string) (float64, error) {
	n, ok := o.m[key].(json.Number)
	if !ok {
		return 0, o.errf(key, "must be a number, got %s", jsonKind(o.m[key]))
	}
	v, err := n.Float64()
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, o.errf(key, "cannot read %s as a finite number", echoRaw(n.String()))
	}
	return v, nil
}

// positive reads a number > 0.
func (o obj) positive(key string) (float64, error) {
	v, err := o.num(key)
	if err == nil && !(v > 0) {
		err = o.errf(key, "must be > 0, got %v", v)
	}
	return v, err
}

// maxInt bounds integer fields: dimensions, head counts and positions all
// fit an int32 in posenc.
const maxInt = math.MaxInt32

// integer reads a whole number in [lo, maxInt]; 64.0 is accepted as 64,
// since Python writes some integer fields as floats.
func (o obj) integer(key string, lo int) (int, error) {
	return o.integerIn(key, lo, maxInt)
}

// integerIn reads a whole number in [lo, hi], as integer does.
func (o obj) integerIn(key string, lo, hi int) (int, error) {
	v, err := o.num(key)
	if err != nil {
		return 0, err
	}
	if v != math.Trunc(v) {
		return 0, o.errf(key, "must be an integer, got %v", v)
	}
	if v < float64(lo) || v > float64(hi) {
		return 0, o.errf(key, "must be an integer in [%d, %d], got %v", lo, hi, v)
	}
	return int(v), nil
}

// str reads a string.
func (o obj) str(key string) (string, error) {
	s, ok := o.m[key].(string)
	if !ok {
		return "", o.errf(key, "must be a string, got %s", jsonKind(o.m[key]))
	}
	return s, nil
}

// boolean reads true or false.
func (o obj) boolean(key string) (bool, error) {
	b, ok := o.m[key].(bool)
	if !ok {
		return false, o.errf(key, "must be true or false, got %s", jsonKind(o.m[key]))
	}
	return b, nil
}

// object reads a nested object.
func (o obj) object(key string) (obj, error) {
	m, ok := o.m[key].(map[string]any)
	if !ok {
		return obj{}, o.errf(key, "must be an object, got %s", jsonKind(o.m[key]))
	}
	return obj{path: o.field(key), m: m}, nil
}

// numbers reads a list of positive finite numbers (a longrope factor
// list: at most maxFactors).
func (o obj) numbers(key string) ([]float64, error) {
	list, err := o.list(key, "numbers", maxFactors, "rotary_dim/2 factors")
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(list))
	for i, it := range list {
		n, ok := it.(json.Number)
		if !ok {
			return nil, o.errf(fmt.Sprintf("%s[%d]", key, i), "must be a number, got %s", jsonKind(it))
		}
		v, err := n.Float64()
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || !(v > 0) {
			return nil, o.errf(fmt.Sprintf("%s[%d]", key, i), "must be a finite number > 0, got %s", echoRaw(n.String()))
		}
		out[i] = v
	}
	return out, nil
}

// sortedKeys lists the object's keys in byte order, for deterministic
// messages.
func (o obj) sortedKeys() []string {
	keys := make([]string, 0, len(o.m))
	for k := range o.m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// jsonKind describes a decoded JSON value for error messages.
func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case json.Number:
		return "the number " + echoRaw(x.String())
	case string:
		return "the string " + quoteInput(x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
