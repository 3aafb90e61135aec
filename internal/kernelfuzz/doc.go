// Package kernelfuzz holds reliability tests for the committed zoo packages
// under generated/: go test -fuzz targets that run every kernel variant the
// CPU can execute against the float64 reference of package verify on random
// shapes, positions and special values (FuzzRoPE, FuzzBias, FuzzAbsolute,
// FuzzRPEFull, FuzzXL; FuzzStorage16 runs the f16/bf16 M-RoPE forms and
// ScaleQ of four internal/goldens packages), concurrency tests (meaningful under -race,
// including the lazy tables' first use in a fresh process), length-check
// tests (a slice one element short panics, naming the argument, before
// anything is written), FuzzSizes (every exported function with fuzzed
// sizes, products that overflow int included, against guard pages) and, on Linux, canary tests that place every buffer
// against a PROT_NONE guard page so that a read or write past either end
// faults.
//
// The package has no non-test code; its seed corpora live in
// testdata/fuzz/<FuzzName>/ and run as ordinary tests under go test.
// To fuzz one target:
//
//	go test -run='^$' -fuzz='^FuzzRoPE$' -fuzztime=40s ./internal/kernelfuzz/
package kernelfuzz
