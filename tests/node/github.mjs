// Signs and verifies GitHub webhooks with GitHub's own code (@octokit/webhooks-methods), and
// prints GitHub's recorded payloads (@octokit/webhooks-examples), both installed by
// scripts/setup.sh --tests into target/node-tools.
//   node github.mjs sign <secret>              (body on stdin) prints X-Hub-Signature-256
//   node github.mjs verify <secret> <signature> (body on stdin) exits 0 when it matches
//   node github.mjs example <event> <action>   prints the first recorded payload of that event
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const modules = new URL("../../target/node-tools/node_modules/", import.meta.url);
if (process.argv[2] === "example") {
  const examples = createRequire(modules)("@octokit/webhooks-examples");
  const [, , , event, action] = process.argv;
  const found = examples.find((e) => e.name === event)?.examples.find((e) => e.action === action);
  if (!found) process.exit(1);
  process.stdout.write(JSON.stringify(found));
  process.exit(0);
}
const tools = new URL("@octokit/webhooks-methods/", modules);
const main = JSON.parse(readFileSync(new URL("package.json", tools), "utf8")).exports["."]?.node?.import ?? "./dist-node/index.js";
const { sign, verify } = await import(new URL(main, tools));
const [action, secret, signature] = process.argv.slice(2);
const body = readFileSync(0, "utf8");
if (action === "sign") {
  process.stdout.write(await sign(secret, body));
} else {
  process.exit((await verify(secret, body, signature)) ? 0 : 1);
}
