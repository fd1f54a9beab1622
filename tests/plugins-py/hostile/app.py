"""A hostile Python plugin for the sandbox tests: config {"mode": …} chooses what it does.
"raise": raises; "loop": never returns; "bomb": allocates until memory runs out; "object":
delivers a new body given as a dict; anything else: delivers."""

import json

from weir_sdk import Plugin, deliver


class WitWorld(Plugin):
    def filter(self, event, config_text):
        mode = json.loads(config_text).get("mode")
        if mode == "raise":
            raise ValueError(f"refusing {event.action()} on purpose")
        if mode == "loop":
            n = 0
            while True:
                n += 1
        if mode == "bomb":
            hoard = []
            while True:
                hoard.append(bytearray(16 << 20))
        if mode == "object":
            return deliver({"reshaped": event.action(), "by": "python"}, {"x-shape": "object"})
        return deliver()
