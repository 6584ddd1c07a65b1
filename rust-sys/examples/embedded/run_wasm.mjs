// run_wasm.mjs: runs the example's checks in wasm32 under node.
//
//   node run_wasm.mjs tvmgen_embedded.wasm
//
// The module (the library built as a cdylib for wasm32-unknown-unknown:
// the Rust interface, the generated C and the crt, compiled by clang) is
// instantiated with no imports at all: no WASI, no libc, nothing from JS.
// tvmgen_check runs every check of src/lib.rs (each variant against the C
// run's output, and the error paths). Prints one line,
//   wasm: 7 checks passed (wasm_bytes N, imports 0)
// or which check failed and its status; exit code 0 or 1.
import { readFileSync } from "node:fs";

if (process.argv.length !== 3) {
  process.stderr.write("usage: node run_wasm.mjs MODULE.wasm\n");
  process.exit(2);
}
const bytes = readFileSync(process.argv[2]);
const module = await WebAssembly.compile(bytes);
const imports = WebAssembly.Module.imports(module);
if (imports.length) {
  const names = imports.map((i) => `${i.module}.${i.name}`).join(", ");
  process.stdout.write(`wasm: the module imports ${names}\n`);
  process.exit(1);
}
const instance = await WebAssembly.instantiate(module, {});
const x = instance.exports;
const n = x.tvmgen_check();
if (n < 0) {
  const at = x.tvmgen_failed_name() >>> 0;
  const len = x.tvmgen_failed_name_len() >>> 0;
  const name = new TextDecoder().decode(new Uint8Array(x.memory.buffer, at, len));
  process.stdout.write(`wasm: check failed: ${name} status ${x.tvmgen_failed_status()}\n`);
  process.exit(1);
}
process.stdout.write(`wasm: ${n} checks passed (wasm_bytes ${bytes.length}, imports 0)\n`);
