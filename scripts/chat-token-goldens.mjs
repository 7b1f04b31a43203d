// Tokenizes chat-template renderings with llama.cpp (parse_special on, no
// BOS added: the templates write their own) and writes the token ids to
// core/chat/testdata/tokens.json. core/chat's tests check that memvanta's
// tokenizer turns the special-token text a template produces into the same
// special tokens. Run after scripts/chat-goldens.mjs:
//
//   MEMVANTA_REF=/work/ref node scripts/chat-token-goldens.mjs
import { readFileSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const ref = process.env.MEMVANTA_REF || "/work/ref";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dir = join(root, "core", "chat", "testdata");
const golden = JSON.parse(readFileSync(join(dir, "golden.json"), "utf8")).cases;
// (vocab under ../shared/vocab, template, conversation)
const pairs = [
  ["ggml-vocab-phi-3.gguf", "phi-3", "multi_turn"],
  ["ggml-vocab-llama-bpe.gguf", "llama3", "multi_turn"],
  ["ggml-vocab-llama-spm.gguf", "mistral", "multi_turn"],
  ["ggml-vocab-llama-spm.gguf", "chatml", "system_user"],
  ["ggml-vocab-llama-bpe.gguf", "qwen2.5", "tools"],
];
const out = [];
for (const [vocab, template, conversation] of pairs) {
  const g = golden.find((c) => c.template === template && c.conversation === conversation && c.add_generation_prompt);
  const file = join(root, "..", "shared", "vocab", vocab);
  const res = JSON.parse(execFileSync("node", [join(ref, "ref.mjs"), "tokenize", file, g.output, "--special", "--no-bos"],
    { cwd: ref, stdio: ["ignore", "pipe", "ignore"] }).toString());
  out.push({ vocab, template, conversation, text: g.output, tokens: res.tokens });
}
writeFileSync(join(dir, "tokens.json"), JSON.stringify({ generator: "llama.cpp (node-llama-cpp) tokenize --special --no-bos via scripts/chat-token-goldens.mjs", cases: out }, null, 1) + "\n");
console.log(`${out.length} cases`);
