package importer

// Typed reading of a GGUF header's metadata values, with the wording of
// type errors.

import (
	"fmt"
	"math"
	"sort"
)

// ggufMeta reads typed metadata values of one header.
type ggufMeta struct {
	h    *ggufHeader
	arch string
}

// key is "<arch>.suffix".
func (m ggufMeta) key(suffix string) string { return m.arch + "." + suffix }

func (m ggufMeta) has(suffix string) bool {
	_, ok := m.h.kv[m.key(suffix)]
	return ok
}

// integer reads an integer-typed value in [lo, maxInt].
func (m ggufMeta) integer(suffix string, lo int) (int, error) {
	return m.integerIn(suffix, lo, maxInt)
}

// integerIn reads an integer-typed value in [lo, hi].
func (m ggufMeta) integerIn(suffix string, lo, hi int) (int, error) {
	k := m.key(suffix)
	var v float64
	switch x := m.h.kv[k].(type) {
	case uint64:
		if x > maxInt {
			return 0, ggufErr(k, "%d exceeds %d", x, maxInt)
		}
		v = float64(x)
	case int64:
		v = float64(x)
	default:
		return 0, ggufErr(k, "must be an integer, got %s", ggufKind(m.h.kv[k]))
	}
	if v < float64(lo) || v > float64(hi) {
		return 0, ggufErr(k, "must be in [%d, %d], got %v", lo, hi, v)
	}
	return int(v), nil
}

// number reads a finite float (or integer) value.
func (m ggufMeta) number(suffix string) (float64, error) {
	k := m.key(suffix)
	var v float64
	switch x := m.h.kv[k].(type) {
	case float64:
		v = x
	case uint64:
		v = float64(x)
	case int64:
		v = float64(x)
	default:
		return 0, ggufErr(k, "must be a number, got %s", ggufKind(m.h.kv[k]))
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, ggufErr(k, "must be finite, got %v", v)
	}
	return v, nil
}

// positive reads a number > 0.
func (m ggufMeta) positive(suffix string) (float64, error) {
	v, err := m.number(suffix)
	if err == nil && !(v > 0) {
		err = ggufErr(m.key(suffix), "must be > 0, got %v", v)
	}
	return v, err
}

// ggufKind describes a metadata value for messages.
func ggufKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing (key absent)"
	case uint64, int64:
		return fmt.Sprintf("the integer %v", x)
	case float64:
		return fmt.Sprintf("the float %v", x)
	case bool:
		return fmt.Sprintf("the bool %v", x)
	case string:
		return "the string " + quoteInput(x)
	case ggufLongString:
		return fmt.Sprintf("a %d-byte string", x.n)
	case ggufArrayValue:
		return fmt.Sprintf("an array of %d %s", x.count, ggufTypeNames[x.elem])
	}
	return fmt.Sprintf("%T", v)
}

// sortedKeys lists a map's keys in byte order.
func sortedKeys(kv map[string]any) []string {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
