// Package importer turns a model's own description of itself into a posenc
// spec: a Hugging Face config.json (FromHF) or the metadata header of a GGUF
// file (FromGGUF). Both return the spec as YAML text that spec.Parse accepts;
// each checks its output with spec.Parse before returning it.
//
// The importers are deliberately strict. A field that changes what the
// positional encoding computes and that the importer does not understand (an
// unknown rope_type, an unknown rope_scaling key, an odd rotary dimension,
// per-layer frequency tensors in a GGUF file) is an error naming that field,
// never a spec that silently computes something else. Fields that do not
// affect positions (vocabulary size, dropout, layer counts, …) are ignored.
package importer

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/posenc/posenc/spec"
)

// Error is a problem with an imported description: a field that is missing,
// malformed, or has a meaning posenc cannot express.
type Error struct {
	// Source is "config.json" or "GGUF".
	Source string
	// Field is the offending field: a dotted config.json path such as
	// "rope_scaling.rope_type", or a GGUF metadata key such as
	// "llama.rope.freq_base"; empty for problems with the input as a whole.
	Field string
	// Msg says what is wrong.
	Msg string
}

// Error formats the error as "source: field: msg".
// A Field taken from the input (a key with control bytes, or longer than
// maxEcho bytes) is shown quoted and cut; control bytes left in Msg are
// escaped, so nothing from the input reaches the terminal raw.
func (e *Error) Error() string {
	msg := escapeNonGraphic(e.Msg)
	if e.Field == "" {
		return e.Source + ": " + msg
	}
	field := e.Field
	if len(field) > maxEcho || escapeNonGraphic(field) != field {
		field = quoteInput(field)
	}
	return e.Source + ": " + field + ": " + msg
}

// nameRE is the shape of a spec name (docs/spec.md: a Go package name).
var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// PackageName derives a spec name from an arbitrary model name such as
// "Llama-3.1-8B" or "qwen2.5-7b-instruct.Q4_K_M": it lowercases the name,
// turns every run of other characters into one underscore, trims
// underscores, prefixes "m" when the result does not start with a letter and
// cuts it to 64 characters. The importers use the name they are given as is;
// callers that start from a file or model name can pass it through here.
func PackageName(s string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			under = false
		} else if !under && b.Len() > 0 {
			b.WriteByte('_')
			under = true
		}
	}
	out := strings.Trim(b.String(), "_")
	if out == "" || out[0] < 'a' || out[0] > 'z' {
		out = "m" + out
	}
	if len(out) > spec.MaxNameLen {
		out = strings.TrimRight(out[:spec.MaxNameLen], "_")
	}
	return out
}

// Limits on RoPE tables written by the importers. spec.Parse allows tables
// up to spec.MaxTableBytes; imported specs stay smaller so that a generated
// package's cos/sin table never exceeds 64 MiB.
const (
	// MaxImportPosition caps max_position for imported RoPE specs.
	MaxImportPosition = 32768
	// MaxImportTableBytes caps the imported cos/sin table size.
	MaxImportTableBytes = 64 << 20
)

// capMaxPosition returns the max_position an imported RoPE spec uses for a
// model whose context length is ctx: min(ctx, MaxImportPosition, the largest
// count whose table fits MaxImportTableBytes). The row length follows
// spec/validate.go: rotary_dim floats for the half layout, twice that for
// interleaved.
func capMaxPosition(ctx, rotaryDim int, layout string) int {
	row := rotaryDim
	if layout == spec.LayoutInterleaved {
		row *= 2
	}
	limit := MaxImportPosition
	if byTable := MaxImportTableBytes / (4 * row); byTable < limit {
		limit = byTable
	}
	if ctx < limit {
		return ctx
	}
	return limit
}

// doc accumulates one spec: leading comment lines, then top-level keys in
// insertion order, then an optional scaling mapping. Only values the
// importer computed are written, so the output is deterministic.
type doc struct {
	comments []string
	keys     []kv
	scaling  []kv
}

// kv is one YAML key and its already formatted value, or, when val is
// empty, a nested block mapping of children.
type kv struct {
	key, val string
	children []kv
}

// note adds a comment line (newlines and control characters are replaced by
// spaces so the text stays a comment).
func (d *doc) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, s)
	d.comments = append(d.comments, s)
}

func (d *doc) set(key, val string)          { d.keys = append(d.keys, kv{key: key, val: val}) }
func (d *doc) block(key string, c ...kv)    { d.keys = append(d.keys, kv{key: key, children: c}) }
func (d *doc) setInt(key string, v int)     { d.set(key, strconv.Itoa(v)) }
func (d *doc) setNum(key string, v float64) { d.set(key, fmtNum(v)) }
func (d *doc) setBool(key string, v bool)   { d.set(key, strconv.FormatBool(v)) }

func (d *doc) sc(key, val string)          { d.scaling = append(d.scaling, kv{key: key, val: val}) }
func (d *doc) scInt(key string, v int)     { d.sc(key, strconv.Itoa(v)) }
func (d *doc) scNum(key string, v float64) { d.sc(key, fmtNum(v)) }
func (d *doc) scBool(key string, v bool)   { d.sc(key, strconv.FormatBool(v)) }
func (d *doc) scList(key string, v []float64) {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmtNum(x)
	}
	d.sc(key, "["+strings.Join(parts, ", ")+"]")
}

// bytes renders the document.
func (d *doc) bytes() []byte {
	var b strings.Builder
	for _, c := range d.comments {
		b.WriteString("# ")
		b.WriteString(c)
		b.WriteByte('\n')
	}
	keys := d.keys
	if len(d.scaling) > 0 {
		keys = append(keys[:len(keys):len(keys)], kv{key: "scaling", children: d.scaling})
	}
	writeKVs(&b, keys, "")
	return []byte(b.String())
}

// writeKVs writes block-style mappings, indenting children by two spaces.
func writeKVs(b *strings.Builder, kvs []kv, indent string) {
	for _, p := range kvs {
		b.WriteString(indent)
		b.WriteString(p.key)
		if p.children != nil {
			b.WriteString(":\n")
			writeKVs(b, p.children, indent+"  ")
			continue
		}
		b.WriteString(": ")
		b.WriteString(p.val)
		b.WriteByte('\n')
	}
}

// fmtNum formats a finite number as the shortest YAML scalar that reads back
// as the same float64: integral values without a fraction or exponent when
// that is short, otherwise Go's shortest representation.
func fmtNum(v float64) string {
	if a := math.Abs(v); a == 0 || (a >= 1e-4 && a < 1e15) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// finish checks the name, renders d and proves the result parses with
// spec.Parse; file names the would-be spec in a parse error.
func finish(source, name string, d *doc) ([]byte, error) {
	out := d.bytes()
	if _, err := spec.Parse(name+".yaml", out); err != nil {
		// The spec exists only in memory: cite its line, not a file.
		msg := err.Error()
		var se *spec.Error
		if errors.As(err, &se) {
			msg = se.Msg
			if se.Field != "" {
				msg = se.Field + ": " + msg
			}
			if se.Line > 0 {
				msg = fmt.Sprintf("line %d: %s", se.Line, msg)
			}
		}
		return nil, &Error{Source: source, Msg: "the imported spec " + name + " does not validate: " + msg}
	}
	return out, nil
}

// checkName requires a usable spec name before any work is done.
func checkName(source, name string) error {
	if !nameRE.MatchString(name) || len(name) > spec.MaxNameLen {
		return &Error{Source: source, Field: "name", Msg: fmt.Sprintf("%s is not a valid spec name: it must match [a-z][a-z0-9_]* and have at most %d characters (see PackageName)", quoteInput(name), spec.MaxNameLen)}
	}
	return nil
}
