package spec

import (
	"fmt"
	"io"
	"os"
)

// MaxInputBytes bounds every file posenc reads as input: a spec, a Hugging
// Face config.json, the metadata header of a GGUF file (docs/spec.md,
// "Input files"). Real ones are a few KiB (a GGUF header with its
// tokenizer some MiB); the limit keeps a hostile file from exhausting
// memory before it is refused.
const MaxInputBytes = 64 << 20

// ReadInput reads the input file at path, refusing one larger than
// MaxInputBytes before reading it whole: a regular file by its size, any
// other (a pipe, a device) after reading MaxInputBytes+1 bytes. The error
// for too large a file is an *Error naming path and the limit.
func ReadInput(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxInputBytes {
		return nil, tooLarge(path, fmt.Sprintf("%d bytes", st.Size()))
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxInputBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxInputBytes {
		return nil, tooLarge(path, "more than that")
	}
	return data, nil
}

// tooLarge is the error for an input file over MaxInputBytes; size says
// how large it is.
func tooLarge(file, size string) *Error {
	return &Error{File: file, Msg: fmt.Sprintf("input file too large: %s, the limit is %d MiB (MaxInputBytes)", size, MaxInputBytes>>20)}
}
