// Package inspect builds the `memvanta inspect` report from a parsed GGUF
// header. The native CLI and the wasm guest both call Build and the Write
// methods, so their output is byte-identical; nothing here depends on the
// platform, the clock or map order.
//
// # JSON schema "memvanta.inspect/v1"
//
// Report.WriteJSON writes one object, fields in this order (a field marked
// "omitted" is absent when it does not apply; no other field is ever
// omitted):
//
//	schema           string  always "memvanta.inspect/v1"
//	file             string  display name given in Options.Name (omitted if empty)
//	gguf_version     number  2 or 3
//	file_size        number  bytes
//	alignment        number  tensor data alignment in bytes
//	data_offset      number  absolute offset of the tensor data section
//	architecture     string  general.architecture ("" if absent)
//	known_architecture bool  an architecture memvanta executes (core/arch's table)
//	name             string  general.name ("" if absent)
//	file_type        number  general.file_type (omitted if absent)
//	parameters       number  sum of tensor element counts
//	tensor_count     number
//	tensor_bytes     number  sum of tensor data sizes
//	type_mix         array   one {"type","count","bytes"} per ggml type present, by type id
//	context_length   number  <arch>.context_length (omitted if absent)
//	hyperparameters  array   {"key","value"} for each well-known <arch>.* key present,
//	                         in a fixed order (see hyperKeys, then the architecture's own keys), key without the arch prefix
//	tokenizer        object  {"model","pre","vocab_size","merges","bos_id","eos_id"};
//	                         model/pre "" and ids -1 when absent (omitted if no tokenizer.ggml.* key)
//	chat_template    bool    tokenizer.chat_template present
//	metadata         array   every key in file order:
//	                         {"key","type","value"} for scalars ("type" like "u32", "string");
//	                         {"key","type","len","head"} for arrays ("type" like "array[string]",
//	                         "head" the first 8 elements) or, with Options.Full,
//	                         {"key","type","len","value"} with every element.
//	                         Non-finite floats are the strings "NaN", "+Inf", "-Inf".
//	tensors          array   every tensor in file order:
//	                         {"name","type","dims","offset","bytes"}; offset relative
//	                         to data_offset, dims ne[0] first
//
// # Error JSON
//
// ErrorJSON(err) for a file that failed to parse:
//
//	{"schema":"memvanta.inspect/v1","error":{"category","offset","key","tensor","message"}}
//
// category is one of truncated, limit, invalid, layout, unsupported (a
// *gguf.Error) or "io" for any other failure; offset, key and tensor are
// present only for a *gguf.Error and key/tensor only when known.
package inspect
