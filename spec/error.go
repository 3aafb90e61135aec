package spec

import (
	"strconv"
	"strings"
)

// Error is a problem with a spec file: a YAML syntax error, a key that is
// unknown or does not belong to the encoding, a value of the wrong type, or a
// value that breaks a rule. Every error returned by Parse and Load for bad
// content is an *Error, so callers may use errors.As to reach the position.
type Error struct {
	// File is the spec's file name as passed to Parse.
	File string
	// Line is the 1-based line of the offending value (for a missing
	// required field, the line of the enclosing mapping); 0 when the YAML
	// parser reported no position.
	Line int
	// Field is the dotted path of the field, e.g. "scaling.factor" or
	// "slopes[3]"; empty for errors about the document as a whole.
	Field string
	// Msg says what is wrong and what is allowed.
	Msg string
}

// Error formats the error as "file:line: field: msg", leaving out the line
// when it is unknown and the field when there is none.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}
