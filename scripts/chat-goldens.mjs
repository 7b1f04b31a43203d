// Renders every (template, conversation, add_generation_prompt) case of
// core/chat/testdata/cases.json with @huggingface/jinja, the JavaScript Jinja
// implementation Hugging Face uses for chat templates, and writes the
// renderings to core/chat/testdata/golden.json. core/chat's tests compare the
// Go renderer with them.
//
//   MEMVANTA_REF=/work/ref node scripts/chat-goldens.mjs
//
// MEMVANTA_REF is a directory whose node_modules holds @huggingface/jinja.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const ref = process.env.MEMVANTA_REF || "/work/ref";
const require = createRequire(join(ref, "package.json"));
const jinjaPath = require.resolve("@huggingface/jinja");
const { Template } = await import(jinjaPath);
const version = JSON.parse(readFileSync(join(dirname(jinjaPath), "..", "package.json"), "utf8")).version;

const dir = join(dirname(fileURLToPath(import.meta.url)), "..", "core", "chat", "testdata");
const cases = JSON.parse(readFileSync(join(dir, "cases.json"), "utf8"));
// strftime_now (gpt-oss's template prints the current date with it) is
// built into the engine and formats new Date(): the goldens fix that time
// to cases.now, in UTC, so they do not depend on the day they were made.
process.env.TZ = "UTC";
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...a) {
    super(...(a.length ? a : [cases.now]));
  }
  static now() {
    return new RealDate(cases.now).getTime();
  }
};
const out = [];
for (const [tname, t] of Object.entries(cases.templates)) {
  const src = readFileSync(join(dir, t.file), "utf8");
  const tmpl = new Template(src);
  for (const [cname, conv] of Object.entries(cases.conversations)) {
    for (const agp of [true, false]) {
      const vars = { messages: conv.messages, add_generation_prompt: agp, bos_token: t.bos_token, eos_token: t.eos_token };
      if (conv.tools) vars.tools = conv.tools;
      const rec = { template: tname, conversation: cname, add_generation_prompt: agp };
      try {
        rec.output = tmpl.render(vars);
      } catch (e) {
        rec.error = String(e.message || e);
      }
      out.push(rec);
    }
  }
}
writeFileSync(join(dir, "golden.json"), JSON.stringify({ generator: `@huggingface/jinja ${version} via scripts/chat-goldens.mjs`, cases: out }, null, 1) + "\n");
console.log(`${out.length} cases, ${out.filter((r) => r.error).length} errors`);
