module arm64test

go 1.26
