package gen

// The committed output: the embedded zoo into generated/, and the golden
// oracle's specs into internal/goldens/ (their tests compare every variant
// with the golden data). TestGeneratedIsFresh fails when either is stale.
//go:generate go run ../cmd/posenc gen -o ../generated
//go:generate sh -c "cd .. && go run ./cmd/posenc gen -o internal/goldens verify/testdata/golden/specs/*.yaml"
