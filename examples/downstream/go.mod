module example.com/downstream

go 1.26.0

require (
	github.com/posenc/posenc v0.0.0
	golang.org/x/sys v0.49.0
)

require (
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/mmcloughlin/avo v0.6.0 // indirect
	go.yaml.in/yaml/v3 v3.0.4 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)

replace github.com/posenc/posenc => ../..
