"""Schemathesis hooks for Weir's contract fuzzing: nothing may leave the machine, so every
webhook URL the fuzzer sends (a string in a `url` field) is replaced by the loopback
receiver named in WEIR_FUZZ_RECEIVER before the request is made. Other values of `url`
(numbers, objects: negative cases) are left for Weir to reject."""
import os

import schemathesis

RECEIVER = os.environ["WEIR_FUZZ_RECEIVER"]


@schemathesis.hook
def before_call(context, case, kwargs):
    if isinstance(case.body, dict) and isinstance(case.body.get("url"), str):
        case.body["url"] = RECEIVER


@schemathesis.serializer("application/wasm")
def wasm(ctx, value):
    """Plugin uploads: whatever bytes were generated (Weir answers 422 to non-components)."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return str(value).encode()
