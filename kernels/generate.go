package kernels

// The assembly files written by Go programs, each unrolled where hand
// writing would repeat one step hundreds of times. The directives live in
// this file, built for every GOARCH, so that one go generate ./kernels on any
// host rewrites all of them (a directive in an _arm64.go file would run only
// under GOARCH=arm64, and its go run would then build a generator the amd64
// host cannot execute). scripts/check-generated.sh fails CI when a committed
// file differs from its generator's output.

//go:generate go run gengemmk512.go
//go:generate go run gengemmq8i16.go
//go:generate go run gengemmkneon.go
//go:generate go run gengemmiq4xs8.go
//go:generate go run gengemmvnni.go
