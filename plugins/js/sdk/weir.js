// The Weir plugin SDK for JavaScript: a small typed wrapper over the `weir:plugin/filter`
// world's bindings (ComponentizeJS maps the WIT to these shapes).
//
//   import { filter, deliver, drop, log } from '../sdk/weir.js';
//   export const handle = filter((event, config) => deliver());
//
// `event` is the host's `event` resource: action(), id(), organisationId(), creatorId(),
// subjectType(), subjectId(), body(), get(pointer), getString(pointer) — `get*` return
// `undefined` when there is no such value. `config` is the attachment's config as JSON text.
import { log as hostLog } from 'weir:plugin/host@0.1.0';

/** Deliver the event: the current body (no argument) or a new one — JSON text, or an object
 *  or array, sent as its JSON — with extra headers ({name: value} or [{name, value}]). */
export function deliver(body, headers) {
  let list = [];
  if (Array.isArray(headers)) list = headers.map(({ name, value }) => ({ name: String(name), value: String(value) }));
  else if (headers) list = Object.entries(headers).map(([name, value]) => ({ name, value: String(value) }));
  // The body is JSON text; an object or array given instead is sent as its JSON.
  const text = body === undefined || body === null ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return { tag: 'deliver', val: { body: text, headers: list } };
}

/** Do not deliver; the reason is recorded on the delivery, which becomes `filtered`. */
export function drop(reason) {
  return { tag: 'drop', val: String(reason) };
}

/** A line in the call's log (kept on the delivery record): level is debug, info, warn or error. */
export function log(level, message) {
  hostLog(level, String(message));
}

/** Wraps a plugin's handler as the world's `handle` export: an exception that escapes it is
 *  logged (`uncaught Error: message at handler@file.js:LINE:COL`) before it fails the call,
 *  so the delivery's plugin error names what went wrong and where. */
export function filter(handler) {
  return (event, config) => {
    try {
      return handler(event, config);
    } catch (e) {
      const where = String((e && e.stack) || '').split('\n').find((line) => line.includes(':')) || '';
      const what = e instanceof Error ? `${e.name}: ${e.message}` : `exception: ${String(e)}`;
      hostLog('error', `uncaught ${what}${where ? ` at ${where.trim()}` : ''}`.slice(0, 900));
      throw e;
    }
  };
}
