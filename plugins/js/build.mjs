// Builds a JavaScript plugin into a WebAssembly component of the weir:plugin/filter world
// with ComponentizeJS (installed by scripts/setup.sh into target/js-toolchain):
//   node plugins/js/build.mjs <plugin.js> <out.wasm>
// Every WASI feature of the JavaScript engine is left out (no stdio, clocks, randomness,
// HTTP): the component imports nothing but weir:plugin/host.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const toolchain = resolve(here, '../../target/js-toolchain/node_modules/@bytecodealliance/componentize-js/src/componentize.js');
const wit = resolve(here, '../sdk/wit');
if (!existsSync(wit)) {
  console.error(`plugins/js/build.mjs: the WIT folder ${wit} is missing: build from a checkout of the Weir repository (plugins/ uses its wit/ and target/)`);
  process.exit(2);
}
if (!existsSync(toolchain)) {
  console.error(`plugins/js/build.mjs: ComponentizeJS is not installed in ${resolve(here, '../../target/js-toolchain')}: run ./scripts/setup.sh --plugin-toolchains from the repository's root`);
  process.exit(2);
}
const { componentize } = await import(pathToFileURL(toolchain).href);

const [source, out] = process.argv.slice(2);
if (!source || !out) {
  console.error('usage: node plugins/js/build.mjs <plugin.js> <out.wasm>');
  process.exit(2);
}
// The engine resolves a plugin's relative imports (`../sdk/weir.js`) from the repository's
// root: build from there, whatever the caller's directory.
const sourcePath = resolve(source);
const outPath = resolve(out);
process.chdir(resolve(here, '../..'));
const { component } = await componentize({
  sourcePath,
  witPath: wit,
  worldName: 'filter',
  disableFeatures: ['stdio', 'random', 'clocks', 'http', 'fetch-event'],
});
await writeFile(outPath, component);
console.error(`built ${out} (${(component.length / 1024 / 1024).toFixed(1)} MiB)`);
