// Against a running Weir (tests/tests/it/clients.rs starts one and sets WEIR_URL,
// WEIR_CLIENT_ID and WEIR_CLIENT_SECRET for an admin and publisher client): a token from the
// client's credentials, a webhook to a receiver of this test's own, an event published, its
// delivery verified, and the event read back — every call typed by the generated schema.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { TokenSource, createClient, verify } from "../src/index.js";

function settings(): { baseUrl: string; clientId: string; clientSecret: string } {
  const { WEIR_URL, WEIR_CLIENT_ID, WEIR_CLIENT_SECRET } = process.env;
  if (!WEIR_URL || !WEIR_CLIENT_ID || !WEIR_CLIENT_SECRET) {
    throw new Error("set WEIR_URL, WEIR_CLIENT_ID and WEIR_CLIENT_SECRET (tests/tests/it/clients.rs does)");
  }
  return { baseUrl: WEIR_URL, clientId: WEIR_CLIENT_ID, clientSecret: WEIR_CLIENT_SECRET };
}

interface Arrived {
  body: Buffer;
  headers: IncomingMessage["headers"];
}

/** A receiver on loopback answering 200 to everything: what arrived, in order. */
async function receiver(): Promise<{ url: string; next: () => Promise<Arrived>; close: () => void }> {
  const waiting: ((a: Arrived) => void)[] = [];
  const arrived: Arrived[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      response.writeHead(200).end();
      const one = { body: Buffer.concat(chunks), headers: request.headers };
      const waiter = waiting.shift();
      if (waiter) waiter(one);
      else arrived.push(one);
    });
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const { port } = server.address() as AddressInfo;
  const next = () => {
    const one = arrived.shift();
    if (one) return Promise.resolve(one);
    return new Promise<Arrived>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no delivery within 20 s")), 20_000);
      waiting.push((a) => {
        clearTimeout(timer);
        resolve(a);
      });
    });
  };
  return { url: `http://127.0.0.1:${port}/hook`, next, close: () => server.close() };
}

test("a token is kept, and another is fetched once it is forgotten", async () => {
  const { baseUrl, clientId, clientSecret } = settings();
  const tokens = new TokenSource(baseUrl, { clientId, clientSecret });
  const first = await tokens.token();
  assert.equal(await tokens.token(), first, "kept");
  tokens.forget();
  assert.notEqual(await tokens.token(), first, "a new one");
  const refused = new TokenSource(baseUrl, { clientId, clientSecret: "wrong" });
  await assert.rejects(refused.token(), /refused the client's credentials: 401/);
});

test("a webhook, an event, its delivery verified, the event read back", async () => {
  const { baseUrl, clientId, clientSecret } = settings();
  const weir = createClient({ baseUrl, credentials: { clientId, clientSecret } });
  const hook = await receiver();
  try {
    const made = await weir.POST("/api/v2/webhooks", {
      body: { url: hook.url, subscribed_actions: ["work_order_created"] },
    });
    assert.equal(made.response.status, 201, JSON.stringify(made.error));
    const secret = made.data!.signing_secret;
    const published = await weir.POST("/api/v2/events", {
      body: {
        action: "work_order_created",
        creator: { id: "usr_7", name: "Ada Lovelace" },
        subject: { type: "WorkOrder", id: "wo_ts" },
        work_order: { id: "wo_ts", title: "Replace pump seal", status: "open", priority: 2 },
      },
    });
    assert.equal(published.response.status, 202, JSON.stringify(published.error));
    const delivery = await hook.next();
    assert.ok(verify(delivery.body, delivery.headers, secret), "the delivery verifies");
    const tampered = Buffer.concat([delivery.body, Buffer.from(" ")]);
    assert.ok(!verify(tampered, delivery.headers, secret), "a changed body does not");
    assert.ok(!verify(delivery.body, delivery.headers, "whsec_" + "A".repeat(43) + "="), "another secret does not");
    const event = await weir.GET("/api/v2/events/{id}", { params: { path: { id: published.data!.id } } });
    assert.equal(event.response.status, 200);
    assert.equal(event.data!.action, "work_order_created");
    const missing = await weir.GET("/api/v2/webhooks/{id}", { params: { path: { id: "wh_00000000000000000000000000" } } });
    assert.equal(missing.response.status, 404);
    assert.equal(missing.error?.error.code, "not_found");
  } finally {
    hook.close();
  }
});
