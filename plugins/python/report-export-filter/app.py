"""`report-export-filter` in Python: the same verdicts as the Rust plugin
(plugins/report-export-filter). Config (every list optional; each list given must match,
an empty or absent list matches anything):
    {"exportable_types": ["Form"], "exportable_ids": ["frm_123"], "creator_ids": ["cli_…"]}
`report_export_completed` events pass only when report_export.exportable.type,
report_export.exportable.id and creator.id match; every other action passes untouched.
"""

import json

from weir_sdk import Plugin, deliver, drop

LISTS = ("exportable_types", "exportable_ids", "creator_ids")


def read_config(text):
    """The config as the Rust plugin reads it: (config, None) or (None, why)."""
    try:
        value = json.loads(text)
    except ValueError as e:
        return None, f"invalid config: {e}"
    if not isinstance(value, dict):
        return None, "invalid config: not an object"
    for key, items in value.items():
        if key not in LISTS:
            return None, f"invalid config: unknown field `{key}`"
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            return None, f"invalid config: `{key}` must be a list of strings"
    return value, None


def allows(items, value):
    """An empty list matches anything; otherwise the value must be in it."""
    return not items or (value is not None and value in items)


class WitWorld(Plugin):
    def filter(self, event, config_text):
        if event.action() != "report_export_completed":
            return deliver()
        config, error = read_config(config_text)
        if error:
            return drop(error)
        kind = event.get_string("/report_export/exportable/type")
        ident = event.get_string("/report_export/exportable/id")
        creator = event.creator_id()
        if (
            allows(config.get("exportable_types"), kind)
            and allows(config.get("exportable_ids"), ident)
            and allows(config.get("creator_ids"), creator)
        ):
            return deliver()
        shown = ["?" if v is None else v for v in (kind, ident)]
        return drop(f"export of {shown[0]} {shown[1]} by {creator} is not in the filter")
