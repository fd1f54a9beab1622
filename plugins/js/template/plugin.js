// A Weir plugin in JavaScript: copy this folder, edit `handle`, then build it with
// ../build.mjs (see the README's plugin guide). It runs once per event and webhook, in a
// fresh sandbox, before the body is signed: no network, files, clocks or randomness.
import { deliver, drop, filter, log } from '../sdk/weir.js';

export const handle = filter((event, configText) => {
  const config = JSON.parse(configText);
  if (config.only_action && event.action() !== config.only_action) {
    return drop(`not ${config.only_action}`);
  }
  log('info', `delivering ${event.id()}`);
  return deliver();
});
