"""A Weir plugin in Python: copy this folder, edit `handle`, then build it (see the
README's plugin guide). It runs once per event and webhook, in a fresh sandbox, before the
body is signed: no network, files, clocks or randomness."""

import json

from weir_sdk import Plugin, deliver, drop, log


class WitWorld(Plugin):
    def filter(self, event, config_text):
        config = json.loads(config_text)
        only = config.get("only_action")
        if only and event.action() != only:
            return drop(f"not {only}")
        log("info", f"delivering {event.id()}")
        return deliver()
