// Signs and verifies GitHub webhooks with GitHub's own code (@octokit/webhooks-methods,
// installed by scripts/setup.sh --tests into target/node-tools).
//   node github.mjs sign <secret>              (body on stdin) prints X-Hub-Signature-256
//   node github.mjs verify <secret> <signature> (body on stdin) exits 0 when it matches
import { readFileSync } from "node:fs";

const tools = new URL("../../target/node-tools/node_modules/@octokit/webhooks-methods/", import.meta.url);
const main = JSON.parse(readFileSync(new URL("package.json", tools), "utf8")).exports["."]?.node?.import ?? "./dist-node/index.js";
const { sign, verify } = await import(new URL(main, tools));
const [action, secret, signature] = process.argv.slice(2);
const body = readFileSync(0, "utf8");
if (action === "sign") {
  process.stdout.write(await sign(secret, body));
} else {
  process.exit((await verify(secret, body, signature)) ? 0 : 1);
}
