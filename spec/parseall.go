package spec

import (
	"bytes"
	"regexp"
)

// docMarker matches a YAML document start marker line ("---", optionally
// followed by white space or a comment). YAML forbids such a line inside a
// scalar, so it always separates documents.
var docMarker = regexp.MustCompile(`^---([ \t].*)?\r?$`)

// LoadAll reads the spec file at path and parses it with ParseAll. A file
// larger than MaxInputBytes is refused before it is read whole.
func LoadAll(path string) ([]*Spec, error) {
	data, err := ReadInput(path)
	if err != nil {
		return nil, err
	}
	return ParseAll(path, data)
}

// ParseAll parses a file holding one spec or several YAML documents
// separated by "---" lines, one spec each (as `posenc import-hf` writes
// for a model with several encodings, e.g. Gemma 3's local and global
// layers). Each document is parsed by Parse, with errors naming its lines
// in the file; its Source is the document's text. A single-document file
// gives exactly Parse's result. The whole file is held to MaxInputBytes
// and MaxYAMLNodes before any document is parsed.
func ParseAll(file string, data []byte) ([]*Spec, error) {
	d := &decoder{file: file}
	d.checkInput(data)
	if d.err != nil {
		return nil, d.err
	}
	type start struct{ off, line int } // a document's first byte and line index
	var markers []start
	for off, line := 0, 0; off < len(data); line++ {
		next := len(data)
		if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
			next = off + i + 1
		}
		if l := data[off:next]; bytes.HasPrefix(l, []byte("---")) && docMarker.Match(bytes.TrimRight(l, "\n")) {
			markers = append(markers, start{off, line})
		}
		off = next
	}
	if len(markers) == 0 {
		s, err := Parse(file, data)
		if err != nil {
			return nil, err
		}
		return []*Spec{s}, nil
	}
	// A leading marker opens the first document; text before it that holds
	// only comments and blank lines belongs to it.
	starts := markers
	if !onlyComments(data[:markers[0].off]) {
		starts = append([]start{{0, 0}}, markers...)
	} else {
		starts[0] = start{0, 0}
	}
	var out []*Spec
	for k, st := range starts {
		end := len(data)
		if k+1 < len(starts) {
			end = starts[k+1].off
		}
		text := data[st.off:end]
		s, err := parseAt(file, text, st.line)
		if err != nil {
			return nil, err
		}
		s.Source = string(text)
		out = append(out, s)
	}
	return out, nil
}

// onlyComments reports whether text holds nothing but comments and blank
// lines.
func onlyComments(text []byte) bool {
	for len(text) > 0 {
		l := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			l, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			return false
		}
	}
	return true
}
