package importer

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
)

// ggufSource names GGUF input in errors.
const ggufSource = "GGUF"

// GGUF metadata value types (ggml docs/gguf.md, enum gguf_metadata_value_type).
const (
	ggufUint8   = 0
	ggufInt8    = 1
	ggufUint16  = 2
	ggufInt16   = 3
	ggufUint32  = 4
	ggufInt32   = 5
	ggufFloat32 = 6
	ggufBool    = 7
	ggufString  = 8
	ggufArray   = 9
	ggufUint64  = 10
	ggufInt64   = 11
	ggufFloat64 = 12
)

// ggufTypeNames names the value types for messages.
var ggufTypeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

// ggufScalarSize is the encoded size of each fixed-size value type (0 for
// string and array).
var ggufScalarSize = [...]uint64{1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8}

// Guards against hostile or corrupt headers. Lengths beyond them are errors;
// nothing is allocated in proportion to a length read from the file except
// strings no longer than ggufMaxString.
const (
	ggufMagic = 0x46554747 // "GGUF" read as a little-endian uint32
	// ggufMaxKV bounds metadata_kv_count (real files carry a few dozen).
	ggufMaxKV = 1 << 20
	// ggufMaxTensors bounds tensor_count.
	ggufMaxTensors = 1 << 24
	// ggufMaxKey bounds key and tensor-name lengths (docs/gguf.md: keys
	// are at most 2^16−1 bytes).
	ggufMaxKey = 1<<16 - 1
	// ggufMaxString is the longest string value kept; longer ones (chat
	// templates, …) are skipped, which is all the importer needs.
	ggufMaxString = 4096
	// ggufMaxDepth bounds nesting of arrays of arrays.
	ggufMaxDepth = 8
	// ggufMaxDims is GGML_MAX_DIMS: a tensor has at most 4 dimensions.
	ggufMaxDims = 4
	// ggufMaxHeader bounds the bytes read before giving up: maxInputBytes
	// (64 MiB). Tokenizer vocabularies make real headers some MiB (Gemma
	// 3's 262k tokens with scores and types about 8 MiB).
	ggufMaxHeader = maxInputBytes
)

// ggufArrayValue records an array's element type and length; the elements
// are skipped.
type ggufArrayValue struct {
	elem  uint32
	count uint64
}

// ggufLongString stands for a string value longer than ggufMaxString.
type ggufLongString struct{ n uint64 }

// ggufHeader is what the importer keeps of a GGUF header: the version, every
// metadata value (uint64, int64, float64, bool, string, ggufArrayValue or
// ggufLongString), and the tensor names.
type ggufHeader struct {
	version uint32
	kv      map[string]any
	tensors []string
}

// ggufReader decodes the header's primitive encodings and counts bytes.
type ggufReader struct {
	r     *bufio.Reader
	order binary.ByteOrder
	off   uint64
	buf   [8]byte
}

// errf is a GGUF error about field.
func ggufErr(field, format string, args ...any) error {
	return &Error{Source: ggufSource, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// fill reads exactly n ≤ 8 bytes into g.buf.
func (g *ggufReader) fill(n int, what string) ([]byte, error) {
	if g.off+uint64(n) > ggufMaxHeader {
		return nil, ggufErr("", "header larger than the %d MiB limit; not a plausible GGUF file", ggufMaxHeader>>20)
	}
	if _, err := io.ReadFull(g.r, g.buf[:n]); err != nil {
		return nil, ggufErr("", "truncated at byte %d reading %s: %v", g.off, what, err)
	}
	g.off += uint64(n)
	return g.buf[:n], nil
}

func (g *ggufReader) u32(what string) (uint32, error) {
	b, err := g.fill(4, what)
	if err != nil {
		return 0, err
	}
	return g.order.Uint32(b), nil
}

func (g *ggufReader) u64(what string) (uint64, error) {
	b, err := g.fill(8, what)
	if err != nil {
		return 0, err
	}
	return g.order.Uint64(b), nil
}

// skip discards n bytes without allocating.
func (g *ggufReader) skip(n uint64, what string) error {
	if n > ggufMaxHeader || g.off+n > ggufMaxHeader {
		return ggufErr("", "%s of %d bytes at byte %d: header larger than the %d MiB limit; not a plausible GGUF file", what, n, g.off, ggufMaxHeader>>20)
	}
	got, err := io.CopyN(io.Discard, g.r, int64(n))
	g.off += uint64(got)
	if err != nil {
		return ggufErr("", "truncated at byte %d reading %s: %v", g.off, what, err)
	}
	return nil
}

// str reads a gguf_string_t (uint64 length, bytes). Strings longer than
// keep are skipped and returned as ggufLongString; longer than limit is an
// error.
func (g *ggufReader) str(keep, limit uint64, what string) (any, error) {
	n, err := g.u64(what + " length")
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, ggufErr("", "%s length %d at byte %d exceeds %d", what, n, g.off-8, limit)
	}
	if n > keep {
		return ggufLongString{n}, g.skip(n, what)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(g.r, b); err != nil {
		return nil, ggufErr("", "truncated at byte %d reading %s: %v", g.off, what, err)
	}
	g.off += n
	return string(b), nil
}

// value reads one value of type typ; arrays are skipped element by element
// (fixed-size elements in one skip), recursing at most ggufMaxDepth deep.
func (g *ggufReader) value(typ uint32, key string, depth int) (any, error) {
	if typ > ggufFloat64 {
		return nil, ggufErr(key, "unknown value type %d", typ)
	}
	switch typ {
	case ggufString:
		keep := uint64(ggufMaxString)
		if depth > 0 {
			keep = 0 // array elements (vocabularies, merges) are never needed
		}
		return g.str(keep, math.MaxUint64, "string value")
	case ggufArray:
		if depth >= ggufMaxDepth {
			return nil, ggufErr(key, "arrays nested more than %d deep", ggufMaxDepth)
		}
		elem, err := g.u32("array element type")
		if err != nil {
			return nil, err
		}
		if elem > ggufFloat64 {
			return nil, ggufErr(key, "unknown array element type %d", elem)
		}
		count, err := g.u64("array length")
		if err != nil {
			return nil, err
		}
		if size := ggufScalarSize[elem]; size > 0 {
			if count > ggufMaxHeader/size {
				return nil, ggufErr(key, "array of %d %s elements is larger than the %d MiB header limit", count, ggufTypeNames[elem], ggufMaxHeader>>20)
			}
			return ggufArrayValue{elem, count}, g.skip(count*size, "array data")
		}
		// Variable-size elements each take at least 8 bytes, so the loop
		// ends at the end of the input or ggufMaxHeader.
		for i := uint64(0); i < count; i++ {
			if _, err := g.value(elem, key, depth+1); err != nil {
				return nil, err
			}
		}
		return ggufArrayValue{elem, count}, nil
	}
	b, err := g.fill(int(ggufScalarSize[typ]), ggufTypeNames[typ]+" value")
	if err != nil {
		return nil, err
	}
	switch typ {
	case ggufUint8:
		return uint64(b[0]), nil
	case ggufInt8:
		return int64(int8(b[0])), nil
	case ggufUint16:
		return uint64(g.order.Uint16(b)), nil
	case ggufInt16:
		return int64(int16(g.order.Uint16(b))), nil
	case ggufUint32:
		return uint64(g.order.Uint32(b)), nil
	case ggufInt32:
		return int64(int32(g.order.Uint32(b))), nil
	case ggufUint64:
		return g.order.Uint64(b), nil
	case ggufInt64:
		return int64(g.order.Uint64(b)), nil
	case ggufFloat32:
		return float64(math.Float32frombits(g.order.Uint32(b))), nil
	case ggufFloat64:
		return math.Float64frombits(g.order.Uint64(b)), nil
	default: // ggufBool
		if b[0] > 1 {
			return nil, ggufErr(key, "bool value %d is neither 0 nor 1", b[0])
		}
		return b[0] == 1, nil
	}
}

// readGGUFHeader decodes a GGUF header (docs/gguf.md): magic "GGUF",
// version (2 or 3; both use uint64 counts), tensor_count,
// metadata_kv_count, the key/value pairs, then the tensor infos (name,
// n_dimensions, dimensions, type, offset), of which it keeps the names. It
// stops there and never reads tensor data. Files written big-endian (the
// version reads as a byte-swapped 2 or 3) are decoded big-endian.
func readGGUFHeader(r io.Reader) (*ggufHeader, error) {
	g := &ggufReader{r: bufio.NewReaderSize(r, 64<<10), order: binary.LittleEndian}
	magic, err := g.u32("magic")
	if err != nil {
		return nil, err
	}
	if magic != ggufMagic {
		return nil, ggufErr("", "bad magic %#08x: not a GGUF file (want the bytes \"GGUF\")", magic)
	}
	version, err := g.u32("version")
	if err != nil {
		return nil, err
	}
	if sw := bits.ReverseBytes32(version); version > 0xffff && (sw == 2 || sw == 3) {
		g.order, version = binary.BigEndian, sw
	}
	switch version {
	case 2, 3:
	case 1:
		return nil, ggufErr("version", "GGUF version 1 (32-bit counts) is not supported; re-convert the model")
	default:
		return nil, ggufErr("version", "unsupported GGUF version %d (want 2 or 3)", version)
	}
	nt, err := g.u64("tensor_count")
	if err != nil {
		return nil, err
	}
	if nt > ggufMaxTensors {
		return nil, ggufErr("tensor_count", "%d tensors is implausible (limit %d)", nt, ggufMaxTensors)
	}
	nkv, err := g.u64("metadata_kv_count")
	if err != nil {
		return nil, err
	}
	if nkv > ggufMaxKV {
		return nil, ggufErr("metadata_kv_count", "%d metadata pairs is implausible (limit %d)", nkv, ggufMaxKV)
	}
	h := &ggufHeader{version: version, kv: map[string]any{}}
	for i := uint64(0); i < nkv; i++ {
		kv, err := g.str(ggufMaxKey, ggufMaxKey, "key")
		if err != nil {
			return nil, err
		}
		key := kv.(string)
		if _, dup := h.kv[key]; dup {
			return nil, ggufErr(key, "duplicate metadata key")
		}
		typ, err := g.u32("value type of " + key)
		if err != nil {
			return nil, err
		}
		v, err := g.value(typ, key, 0)
		if err != nil {
			return nil, err
		}
		h.kv[key] = v
	}
	for i := uint64(0); i < nt; i++ {
		nv, err := g.str(ggufMaxKey, ggufMaxKey, "tensor name")
		if err != nil {
			return nil, err
		}
		name := nv.(string)
		nd, err := g.u32("n_dimensions of tensor " + name)
		if err != nil {
			return nil, err
		}
		if nd > ggufMaxDims {
			return nil, ggufErr(name, "tensor has %d dimensions (at most %d)", nd, ggufMaxDims)
		}
		// dimensions (uint64 each), ggml type (uint32), offset (uint64).
		if err := g.skip(uint64(nd)*8+4+8, "tensor info of "+name); err != nil {
			return nil, err
		}
		h.tensors = append(h.tensors, name)
	}
	return h, nil
}
