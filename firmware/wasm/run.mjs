// run.mjs: runs a model built by run.py (a wasm32 module with no imports)
// under node and prints what it computed as one line of JSON.
//
//   node run.mjs MODEL.wasm [--check] [--repeat N] INPUT0.bin [INPUT1.bin ...]
//
// The module is instantiated with an empty import object: no WASI, no libc,
// nothing from JS, so what runs is exactly the compiled model and crt. The
// glue (written by run.py) owns every buffer as a static array and exports
// where each one is (tn_wasm_input(i) and so on); this script copies each
// input file's bytes there, calls tn_wasm_run (the generated
// tvmgen_<name>_run on those buffers) and prints {"status", "outputs" (hex
// strings), "run_ms", "wasm_bytes", "memory_bytes", "imports" (none)}.
// With --check it first passes the generated run a NULL input and a
// misaligned pool, by writing those pointers into the structs the glue
// hands it, and records the codes it returned (a trap is caught and
// recorded, not thrown), then restores the structs for the real run. Exit
// code 0 when the run returned a status (whatever it was), 1 on a trap or a
// bad argument.
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

function usage(msg) {
  process.stderr.write(`run.mjs: ${msg}\n` +
    "usage: node run.mjs MODEL.wasm [--check] [--repeat N] INPUT.bin...\n");
  process.exit(1);
}

const args = process.argv.slice(2);
let check = false;
let repeat = 1;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--check") check = true;
  else if (args[i] === "--repeat") repeat = Number(args[++i]);
  else files.push(args[i]);
}
if (files.length < 1 || !(repeat >= 1)) usage("missing arguments");
const [wasmPath, ...inputPaths] = files;

const bytes = readFileSync(wasmPath);
const { module, instance } = await WebAssembly.instantiate(bytes, {});
const x = instance.exports;
const mem = () => new Uint8Array(x.memory.buffer);
const u32 = (v) => v >>> 0; // wasm32 pointers come back as signed i32

x.tn_wasm_reset();
const nIn = x.tn_wasm_num_inputs();
const nOut = x.tn_wasm_num_outputs();
if (inputPaths.length !== nIn)
  usage(`the model takes ${nIn} input(s), ${inputPaths.length} given`);

// Calls the generated run; a trap becomes {trap: message}.
function runOnce() {
  try {
    return { status: x.tn_wasm_run() };
  } catch (e) {
    return { trap: String(e && e.message ? e.message : e) };
  }
}

// Overwrites one pointer slot (4 bytes, little-endian) of a glue struct.
function poke(addr, value) {
  new DataView(x.memory.buffer).setUint32(u32(addr), value >>> 0, true);
}

const result = {
  wasm_bytes: bytes.length,
  memory_bytes: x.memory.buffer.byteLength,
  imports: WebAssembly.Module.imports(module).map((i) => `${i.module}.${i.name}`),
};
if (check) {
  const checks = {};
  const ins = u32(x.tn_wasm_inputs());
  if (ins !== 0 && nIn > 0) { // 0: inputs live in the pool (io_in_pool)
    poke(ins, 0);
    const r = runOnce();
    checks.null_input = r.trap !== undefined ? { trap: r.trap } : r.status;
    x.tn_wasm_reset();
  }
  const pools = u32(x.tn_wasm_workspace_pools());
  if (pools !== 0) {
    poke(pools, u32(x.tn_wasm_pool(0)) + 1);
    const r = runOnce();
    checks.misaligned_pool = r.trap !== undefined ? { trap: r.trap } : r.status;
    x.tn_wasm_reset();
  }
  result.checks = checks;
}

for (let i = 0; i < nIn; i++) {
  const data = readFileSync(inputPaths[i]);
  const size = x.tn_wasm_input_size(i) >>> 0;
  if (data.length !== size)
    usage(`${inputPaths[i]}: ${data.length} bytes, input ${i} takes ${size}`);
  mem().set(data, u32(x.tn_wasm_input(i)));
}
let r;
const t0 = performance.now();
for (let k = 0; k < repeat; k++) {
  r = runOnce();
  if (r.trap !== undefined) break;
}
result.run_ms = (performance.now() - t0) / repeat;
if (r.trap !== undefined) {
  result.trap = r.trap;
} else {
  result.status = r.status;
  result.outputs = [];
  for (let i = 0; i < nOut; i++) {
    const p = u32(x.tn_wasm_output(i));
    const n = x.tn_wasm_output_size(i) >>> 0;
    result.outputs.push(Buffer.from(mem().subarray(p, p + n)).toString("hex"));
  }
}
process.stdout.write(JSON.stringify(result) + "\n");
process.exit(result.trap !== undefined ? 1 : 0);
