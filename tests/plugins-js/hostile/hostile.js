// A hostile JavaScript plugin for the sandbox tests: config {"mode": …} chooses what it does.
//   "throw": throws an Error; "loop": never returns; "bomb": allocates until memory runs
//   out; "object": delivers a new body given as an object; anything else: delivers.
import { deliver, filter } from '../../../plugins/js/sdk/weir.js';

export const handle = filter((event, configText) => {
  const { mode } = JSON.parse(configText);
  if (mode === 'throw') throw new Error(`refusing ${event.action()} on purpose`);
  if (mode === 'loop') {
    let n = 0;
    for (;;) n += 1;
  }
  if (mode === 'bomb') {
    const hoard = [];
    for (;;) hoard.push(new ArrayBuffer(16 << 20));
  }
  if (mode === 'object') return deliver({ reshaped: event.action(), by: 'javascript' }, { 'x-shape': 'object' });
  return deliver();
});
