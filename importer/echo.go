package importer

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxEcho is the most bytes of one value taken from an input file that an
// error message repeats; a longer value is cut there and its length given.
const maxEcho = 80

// clip cuts s to at most maxEcho bytes at a rune boundary and reports
// whether it cut anything.
func clip(s string) (string, bool) {
	if len(s) <= maxEcho {
		return s, false
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}

// quoteInput renders a string taken from an input file (a key, a model
// type, a string value) for an error message: Go-quoted, so control bytes
// such as ESC appear as escapes rather than reaching the terminal, and cut
// to maxEcho bytes with an ellipsis and the total length when longer.
func quoteInput(s string) string {
	c, cut := clip(s)
	if !cut {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(c), len(s))
}

// echoRaw renders text from an input file that is shown unquoted (a JSON
// number, a config path): cut like quoteInput, its non-printable runes
// escaped.
func echoRaw(s string) string {
	c, cut := clip(s)
	c = escapeNonGraphic(c)
	if cut {
		return fmt.Sprintf("%s… (%d bytes)", c, len(s))
	}
	return c
}

// escapeNonGraphic replaces every rune that is not graphic (control bytes,
// invalid UTF-8, line and paragraph separators) with its Go escape; other
// text, spaces included, is kept.
func escapeNonGraphic(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || (r != ' ' && !strconv.IsGraphic(r)) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i, w := 0, 0; i < len(s); i += w {
		r, n := utf8.DecodeRuneInString(s[i:])
		w = n
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == ' ' || (r != utf8.RuneError && strconv.IsGraphic(r)):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}
