// Checks a delivery's signature as Weir makes it (contract §4): the Standard Webhooks headers
// (`webhook-id`, `webhook-timestamp`, `webhook-signature`), else `X-Webhook-Signature` (the
// hex HMAC-SHA256 of the body under the whole secret). Comparisons are in constant time.
import { createHmac, timingSafeEqual } from "node:crypto";

/** A request's headers: a fetch `Headers`, or a plain object as Node's `IncomingMessage` has. */
export type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far `webhook-timestamp` may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Now, in Unix seconds (default: the clock). */
  now?: number;
}

const PREFIX = "whsec_";
const STANDARD = /^[A-Za-z0-9+/]*={0,2}$/;
const URL_SAFE = /^[A-Za-z0-9_-]*$/;

/** The Standard Webhooks key of a signing secret: the base64 after `whsec_` (URL-safe
 * base64 without padding for older secrets), else the secret's UTF-8 bytes. */
export function standardKey(secret: string): Buffer {
  const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  for (const [shape, encoding] of [[STANDARD, "base64"], [URL_SAFE, "base64url"]] as const) {
    if (encoded.length > 0 && shape.test(encoded)) {
      const key = Buffer.from(encoded, encoding);
      // Only a canonical encoding is one (Node's decoder takes anything).
      if (key.length > 0 && key.toString(encoding) === encoded) return key;
    }
  }
  return Buffer.from(secret, "utf8");
}

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === "function") {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(" ") : value;
}

function same(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether `body` (the exact bytes received) and `headers` are a delivery signed with
 * `secret` (the webhook's `signing_secret`). */
export function verify(body: string | Uint8Array, headers: HeaderSource, secret: string, options: VerifyOptions = {}): boolean {
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body);
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (id !== undefined && timestamp !== undefined && signatures !== undefined) {
    if (!/^\d+$/.test(timestamp)) return false;
    const now = options.now ?? Math.floor(Date.now() / 1000);
    if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) return false;
    const mac = createHmac("sha256", standardKey(secret)).update(`${id}.${timestamp}.`).update(bytes).digest();
    return signatures
      .split(" ")
      .filter((entry) => entry.startsWith("v1,"))
      .some((entry) => same(Buffer.from(entry.slice(3), "base64"), mac));
  }
  const hex = header(headers, "x-webhook-signature");
  if (hex === undefined || !/^[0-9a-f]{64}$/i.test(hex.trim())) return false;
  const mac = createHmac("sha256", Buffer.from(secret, "utf8")).update(bytes).digest();
  return same(Buffer.from(hex.trim(), "hex"), mac);
}
