// Package serve is memvanta's OpenAI-compatible HTTP server: the OpenAI
// completions and chat completions endpoints (JSON and server-sent events),
// llama-server's /tokenize, /detokenize, /apply-template and /health, and
// Prometheus metrics at /metrics, over a core/engine scheduler. It owns the
// wire formats, validation, authentication and the HTTP side of
// cancellation and shutdown; the scheduling is core/engine's.
package serve
