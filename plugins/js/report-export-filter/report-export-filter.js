// `report-export-filter` in JavaScript: the same verdicts as the Rust plugin
// (plugins/report-export-filter). Config (every list optional; each list given must match,
// an empty or absent list matches anything):
//   {"exportable_types": ["Form"], "exportable_ids": ["frm_123"], "creator_ids": ["cli_…"]}
// `report_export_completed` events pass only when report_export.exportable.type,
// report_export.exportable.id and creator.id match; every other action passes untouched.
import { deliver, drop, filter } from '../sdk/weir.js';

const LISTS = ['exportable_types', 'exportable_ids', 'creator_ids'];

// The config as the Rust plugin reads it: an object of these three lists of strings, no
// other field; null when it is not one.
function readConfig(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { error: `invalid config: ${e.message}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { error: 'invalid config: not an object' };
  }
  const config = {};
  for (const [key, list] of Object.entries(value)) {
    if (!LISTS.includes(key)) return { error: `invalid config: unknown field \`${key}\`` };
    if (!Array.isArray(list) || !list.every((item) => typeof item === 'string')) {
      return { error: `invalid config: \`${key}\` must be a list of strings` };
    }
    config[key] = list;
  }
  return { config };
}

// An empty list matches anything; otherwise the value must be in it.
function allows(list, value) {
  return !list || list.length === 0 || (value !== undefined && list.includes(value));
}

export const handle = filter((event, configText) => {
  if (event.action() !== 'report_export_completed') return deliver();
  const { config, error } = readConfig(configText);
  if (error) return drop(error);
  const kind = event.getString('/report_export/exportable/type');
  const id = event.getString('/report_export/exportable/id');
  const creator = event.creatorId();
  if (allows(config.exportable_types, kind) && allows(config.exportable_ids, id) && allows(config.creator_ids, creator)) {
    return deliver();
  }
  return drop(`export of ${kind ?? '?'} ${id ?? '?'} by ${creator} is not in the filter`);
});
