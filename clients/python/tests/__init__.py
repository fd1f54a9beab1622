"""The client's tests: the shared signature vectors, and against a running Weir."""
