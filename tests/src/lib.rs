//! Weir's integration tests live in `tests/it/`: one test binary with a `support` module
//! that starts a real `redis-server`, real Weir servers (in-process on port 0, or as the
//! `weir` binary) and real HTTP receivers.
