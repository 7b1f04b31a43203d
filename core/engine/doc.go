// Package engine schedules many generation requests over one model: a fixed
// number of slots (llama-server's -np), each with its own KV cache, a
// bounded wait queue, and a loop that advances every active slot by one
// step at a time — a chunk of prompt for a slot still prefilling, one token
// for a slot that is generating — so new requests join between steps and a
// long prompt does not stall the others. Options.StepTokens bounds a step's
// tokens as llama-server's batch and vLLM's token budget do: generating
// slots first, prompt chunks oldest first in what is left.
//
// The forward work of a step goes through a Stepper. PerSeq runs each
// sequence's chunk through the model in turn (one Forward per sequence);
// a batched Stepper can run all of them through one forward pass without
// any change to the scheduler.
//
// Each free slot keeps the tokens its cache holds after its last request. A
// new request takes the free slot whose tokens share the longest prefix with
// its prompt and only the rest of the prompt is computed, so a repeated
// system prompt, or the earlier turns of a chat, are not recomputed.
//
// Sampling per request: llama.cpp's chain (core/sample), plus OpenAI's
// frequency and presence penalties (over the tokens generated so far) and
// logit_bias, applied to the slot's copy of the logits first. After a step
// the slots pick their tokens in parallel (each reads only its own logits
// and sampler); text is emitted serially. Text is streamed as it
// is decoded; output that could be the start of a stop string is held back
// until it is known not to be.
package engine
