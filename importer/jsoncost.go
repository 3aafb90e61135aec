package importer

import "fmt"

// The cost bound of a config.json, checked before encoding/json decodes
// it into maps and slices.

// jsonValueBound is an upper bound on the values in the JSON text data:
// every value but the first follows a ',' (the next element or member) or
// opens after '[' or '{' (the first one), outside strings. It returns the
// byte offset at which the bound passes limit, or -1.
func jsonValueBound(data []byte, limit int) int {
	n, inString, escaped := 1, false, false
	for i, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ',' || c == '[' || c == '{':
			if n++; n > limit {
				return i
			}
		}
	}
	return -1
}

// checkConfigSize refuses a config.json over maxInputBytes or with more
// than maxJSONValues values, before it is decoded.
func checkConfigSize(data []byte) error {
	if len(data) > maxInputBytes {
		return tooLarge(hfSource, len(data))
	}
	if off := jsonValueBound(data, maxJSONValues); off >= 0 {
		return &Error{Source: hfSource, Msg: fmt.Sprintf("more than %d JSON values by byte %d; a config.json holds some hundreds", maxJSONValues, off)}
	}
	return nil
}
