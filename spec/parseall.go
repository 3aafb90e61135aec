package spec

import (
	"os"
	"regexp"
	"strings"
)

// docMarker matches a YAML document start marker line ("---", optionally
// followed by white space or a comment). YAML forbids such a line inside a
// scalar, so it always separates documents.
var docMarker = regexp.MustCompile(`^---([ \t].*)?\r?$`)

// LoadAll reads the spec file at path and parses it with ParseAll.
func LoadAll(path string) ([]*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseAll(path, data)
}

// ParseAll parses a file holding one spec or several YAML documents
// separated by "---" lines, one spec each (as `posenc import-hf` writes
// for a model with several encodings, e.g. Gemma 3's local and global
// layers). Each document is parsed by Parse with the lines it has in the
// file, so errors name the right line; its Source is the document's text.
// A single-document file gives exactly Parse's result.
func ParseAll(file string, data []byte) ([]*Spec, error) {
	lines := strings.SplitAfter(string(data), "\n")
	var starts []int // index of each document's first line
	var markers []int
	for i, l := range lines {
		if docMarker.MatchString(strings.TrimRight(l, "\n")) {
			markers = append(markers, i)
		}
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
	if !onlyComments(lines[:markers[0]]) {
		starts = append(starts, 0)
	}
	for _, m := range markers {
		starts = append(starts, m)
	}
	var out []*Spec
	for k, st := range starts {
		end := len(lines)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		text := strings.Join(lines[st:end], "")
		if k == 0 && st > 0 {
			text = strings.Join(lines[:end], "")
			st = 0
		}
		// Blank lines in front keep the document's line numbers.
		padded := strings.Repeat("\n", st) + text
		s, err := Parse(file, []byte(padded))
		if err != nil {
			return nil, err
		}
		s.Source = text
		out = append(out, s)
	}
	return out, nil
}

// onlyComments reports whether lines hold nothing but comments and blanks.
func onlyComments(lines []string) bool {
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			return false
		}
	}
	return true
}
