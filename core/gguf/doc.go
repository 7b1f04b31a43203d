// Package gguf reads and writes the GGUF container (v2 and v3,
// little-endian) that llama.cpp models ship in.
//
// Parse works from an io.ReaderAt plus a size so one implementation serves
// an mmap, an *os.File and a byte slice inside the wasm sandbox. It reads
// only the header, metadata and tensor table, through a 64 KiB window (a
// 150k-token vocabulary is millions of tiny fields: one ReadAt per field
// would dominate), so inspecting a multi-GB model touches its first bytes
// only. Files are untrusted: every count is checked against Limits and
// against the bytes left in the file before anything is allocated, and
// every defect is a *Error with a Category, the byte offset and the key or
// tensor involved. Validation is architecture- and type-neutral: any ggml
// type in core/ggml is accepted as long as sizes, alignment and placement
// are consistent.
//
// Writer produces v3 files, streaming tensor data so a model never has to
// be in memory at once.
package gguf
