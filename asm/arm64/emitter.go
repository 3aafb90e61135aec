package arm64

import (
	"fmt"
	"sort"
	"strings"
)

// Emitter writes Go arm64 assembly text. Every method checks its operands;
// the first problem is kept as a sticky error (Err) and every later call is
// a no-op, so a generator can emit a whole function and check once.
type Emitter struct {
	b       strings.Builder
	err     error
	fn      string         // TEXT block being emitted, "" outside one
	defined map[Label]bool // labels defined in fn
	used    map[Label]bool // labels branched to in fn
	nlabel  int
}

// NewEmitter returns an empty emitter.
func NewEmitter() *Emitter { return &Emitter{} }

// Err returns the first error recorded, or nil.
func (e *Emitter) Err() error { return e.err }

// errorf records an error unless one is already kept.
func (e *Emitter) errorf(format string, args ...any) {
	if e.err == nil {
		where := ""
		if e.fn != "" {
			where = e.fn + ": "
		}
		e.err = fmt.Errorf("arm64 emitter: "+where+format, args...)
	}
}

// ok reports whether emission may proceed.
func (e *Emitter) ok() bool { return e.err == nil }

// line writes one raw line (no indentation added).
func (e *Emitter) line(s string) {
	if e.ok() {
		e.b.WriteString(s)
		e.b.WriteByte('\n')
	}
}

// ins writes one instruction line, tab-indented.
func (e *Emitter) ins(format string, args ...any) {
	if e.ok() {
		e.line("\t" + fmt.Sprintf(format, args...))
	}
}

// Raw writes a line verbatim (directives such as #include).
func (e *Emitter) Raw(s string) { e.line(s) }

// Comment writes a // comment line (at the indentation of instructions when
// inside a TEXT block). An empty comment writes a blank line.
func (e *Emitter) Comment(format string, args ...any) {
	if !e.ok() {
		return
	}
	s := fmt.Sprintf(format, args...)
	if s == "" {
		e.line("")
		return
	}
	ind := ""
	if e.fn != "" {
		ind = "\t"
	}
	for _, l := range strings.Split(s, "\n") {
		e.line(ind + "// " + l)
	}
}

// Text opens a TEXT block for the Go function name (declared in the package's
// .go file) with a zero-size local frame and argSize bytes of arguments. The
// previous block must have been closed by End.
func (e *Emitter) Text(name string, argSize int) {
	if !e.ok() {
		return
	}
	if e.fn != "" {
		e.errorf("TEXT %s while %s is open", name, e.fn)
		return
	}
	if name == "" || argSize < 0 {
		e.errorf("bad TEXT %q $0-%d", name, argSize)
		return
	}
	e.fn = name
	e.defined = map[Label]bool{}
	e.used = map[Label]bool{}
	e.nlabel = 0
	e.line(fmt.Sprintf("TEXT ·%s(SB), NOSPLIT, $0-%d", name, argSize))
}

// End closes the TEXT block, checking that every branch target was defined.
func (e *Emitter) End() {
	if !e.ok() {
		return
	}
	if e.fn == "" {
		e.errorf("End outside a TEXT block")
		return
	}
	var undefined []string
	for l := range e.used {
		if !e.defined[l] {
			undefined = append(undefined, string(l))
		}
	}
	if len(undefined) > 0 {
		sort.Strings(undefined)
		e.errorf("branch to undefined label %s", strings.Join(undefined, ", "))
		return
	}
	e.fn = ""
	e.line("")
}

// NewLabel returns a label unique within the current TEXT block, built from
// hint.
func (e *Emitter) NewLabel(hint string) Label {
	e.nlabel++
	return Label(fmt.Sprintf("%s%d", hint, e.nlabel))
}

// Label defines l at the current position.
func (e *Emitter) Label(l Label) {
	if !e.ok() {
		return
	}
	if e.fn == "" || l == "" {
		e.errorf("label %q outside a TEXT block or empty", l)
		return
	}
	if e.defined[l] {
		e.errorf("label %s defined twice", l)
		return
	}
	e.defined[l] = true
	e.line(string(l) + ":")
}

// Bytes returns the text written so far, or the sticky error. A TEXT block
// left open is an error.
func (e *Emitter) Bytes() ([]byte, error) {
	if e.err == nil && e.fn != "" {
		e.errorf("TEXT block not closed")
	}
	if e.err != nil {
		return nil, e.err
	}
	return []byte(e.b.String()), nil
}

// ---- operand checks ----

func (e *Emitter) checkR(rs ...Reg) bool {
	for _, r := range rs {
		if r < 0 || r > 25 || r == 18 {
			e.errorf("general register R%d not usable (R0..R17, R19..R25)", int(r))
			return false
		}
	}
	return e.ok()
}

func (e *Emitter) checkV(vs ...VReg) bool {
	for _, v := range vs {
		if v < 0 || v > 31 {
			e.errorf("vector register V%d out of range 0..31", int(v))
			return false
		}
	}
	return e.ok()
}

// checkVec checks register numbers and that every operand has one of the
// allowed arrangements, all the same.
func (e *Emitter) checkVec(op string, allowed []Arrangement, vs ...Vec) bool {
	for i, v := range vs {
		if !e.checkV(v.R) {
			return false
		}
		okA := false
		for _, a := range allowed {
			if v.A == a {
				okA = true
			}
		}
		if !okA {
			e.errorf("%s: arrangement %s not allowed", op, v.A)
			return false
		}
		if i > 0 && v.A != vs[0].A {
			e.errorf("%s: mixed arrangements %s and %s", op, vs[0].A, v.A)
			return false
		}
	}
	return e.ok()
}

func (e *Emitter) inFn(op string) bool {
	if e.ok() && e.fn == "" {
		e.errorf("%s outside a TEXT block", op)
	}
	return e.ok()
}
