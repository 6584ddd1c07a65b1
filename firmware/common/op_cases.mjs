// op_cases.mjs: runs a wasm32 build of op_cases.c (op_cases_wasm.c) under
// node and prints its text, then `done F` with F the failed cases.
//
//   node op_cases.mjs OP_CASES.wasm
//
// The module is instantiated with an empty import object (no WASI, no
// libc): what runs is the compiled cases and the crt. Exit code 0 when every
// case passed, 1 when one failed, 2 on a trap.
import { readFileSync } from "node:fs";

const [wasmPath] = process.argv.slice(2);
if (!wasmPath) {
  process.stderr.write("usage: node op_cases.mjs OP_CASES.wasm\n");
  process.exit(2);
}
const { module, instance } = await WebAssembly.instantiate(readFileSync(wasmPath), {});
const imports = WebAssembly.Module.imports(module);
if (imports.length !== 0) {
  process.stdout.write(`imports ${imports.map((i) => `${i.module}.${i.name}`).join(" ")}\n`);
}
const x = instance.exports;
let failed;
try {
  failed = x.oc_wasm_run();
} catch (e) {
  failed = null;
  process.stdout.write(`trap ${String(e && e.message ? e.message : e)}\n`);
}
const p = x.oc_wasm_text() >>> 0;
const n = x.oc_wasm_text_len() >>> 0;
process.stdout.write(Buffer.from(new Uint8Array(x.memory.buffer, p, n)).toString("latin1"));
if (failed === null) process.exit(2);
process.stdout.write(`done ${failed}\n`);
process.exit(failed ? 1 : 0);
