module github.com/memvanta/memvanta

go 1.26.0

require (
	github.com/ardanlabs/jinja v1.8.0
	github.com/google/go-cmp v0.7.0
	github.com/klauspost/cpuid/v2 v2.3.0
	github.com/tetratelabs/wazero v1.12.0
	golang.org/x/sys v0.50.0
)
