package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Load reads the spec file at path and parses it with Parse, using path as
// the file name in errors and in Spec.File.
// A file larger than MaxInputBytes is refused before it is read whole.
func Load(path string) (*Spec, error) {
	data, err := ReadInput(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse decodes the single YAML document in data into a Spec, applies every
// default and checks every rule. file names the source in errors and becomes
// Spec.File; data becomes Spec.Source. Problems with the content are
// reported as an *Error naming the file, line and field. Data larger than
// MaxInputBytes, or with more than MaxYAMLNodes nodes, is refused before
// the YAML parser sees it.
func Parse(file string, data []byte) (*Spec, error) {
	return parseAt(file, data, 0)
}

// parseAt is Parse for data that starts after the first offset lines of
// file (one document of several, see ParseAll): error lines are lines of
// file.
func parseAt(file string, data []byte, offset int) (s *Spec, err error) {
	defer func() {
		// yaml.v3 reports its own failures as errors; anything else
		// escaping it is still a problem with the input, not the caller.
		if r := recover(); r != nil {
			s, err = nil, &Error{File: file, Msg: fmt.Sprintf("YAML decoder failure: %v", r)}
		}
	}()
	d := &decoder{file: file, lines: map[string]int{}, lineOffset: offset}
	d.checkInput(data)
	if d.err != nil {
		return nil, d.err
	}
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
	// lineOffset is added to every line reported: the lines of data that
	// precede it in the file.
	lineOffset int
}

// fail records an error unless one is already recorded: the first problem
// found is the one reported.
func (d *decoder) fail(line int, field, format string, args ...any) {
	if d.err == nil {
		if line > 0 {
			line += d.lineOffset
		}
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
