// The shared signature vectors (clients/signature-vectors.json), which Weir's own signer and
// the Python client pass too.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { verify } from "../src/index.js";

interface Vector {
  name: string;
  body: string;
  headers: Record<string, string>;
  checks: { secret: string; valid: boolean }[];
}
const file = new URL("../../../signature-vectors.json", import.meta.url);
const { now, tolerance_seconds, vectors } = JSON.parse(readFileSync(file, "utf8")) as {
  now: number;
  tolerance_seconds: number;
  vectors: Vector[];
};

test("there are vectors to check", () => assert.ok(vectors.length >= 10));

for (const vector of vectors) {
  test(vector.name, () => {
    for (const { secret, valid } of vector.checks) {
      const options = { now, toleranceSeconds: tolerance_seconds };
      assert.equal(verify(vector.body, vector.headers, secret, options), valid, `with ${secret}`);
      // The same through a fetch Headers and as bytes.
      const bytes = new TextEncoder().encode(vector.body);
      assert.equal(verify(bytes, new Headers(vector.headers), secret, options), valid);
    }
  });
}
