//! Why a store operation failed, and which failures mean "try again later".

/// What a store operation gives: its value, or why it failed.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A store failure. `Unavailable` means Redis cannot serve right now (unreachable, loading,
/// busy, failing over) or did not confirm a write to enough replicas: callers answer 503
/// and try again later.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    #[error("Redis is unavailable: {0}")]
    Unavailable(redis::RedisError),
    #[error("only {acked} of {wanted} replicas confirmed the write in time")]
    NotReplicated { acked: u32, wanted: u32 },
    #[error("Redis error: {0}")]
    Redis(redis::RedisError),
    #[error("key {key} holds what cannot be read: {reason}")]
    Corrupt { key: String, reason: String },
    /// A script or a batch answered something this version of Weir does not read.
    #[error("{what} answered what this version cannot read: {reason}")]
    Reply { what: &'static str, reason: String },
    /// A layout mistake: a script was given keys of different hash slots (refused on one
    /// Redis as on a cluster).
    #[error("{script} was called with keys of different hash slots ({key})")]
    CrossSlot { script: &'static str, key: String },
    #[error("the data set has no partition {0}")]
    NoPartition(u16),
    /// History in PostgreSQL cannot be reached (`crate::history`): what moved there cannot
    /// be read now.
    #[error("{0}")]
    HistoryUnavailable(String),
    /// History in PostgreSQL refused a statement (unavailable to the caller, `503`: an
    /// operator's problem to fix, not the request's; logged as an error).
    #[error("{0}")]
    History(String),
    /// A task the store runs (a batcher) has stopped: the process is shutting down.
    #[error("the store's {0} has stopped")]
    Stopped(&'static str),
    #[error(
        "this Redis holds data of an earlier Weir key layout (prefix `{0}`); this version cannot read it. \
         Point Weir at an empty Redis (or another WEIR_REDIS_PREFIX; for the managed Redis, move its \
         WEIR_DATA_DIR aside)"
    )]
    OldLayout(String),
}

impl StoreError {
    /// Whether trying again later may succeed (the store was not ready, not the request
    /// wrong): the caller answers `503` with `Retry-After`. History's failures all are —
    /// none is the request's fault.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            StoreError::Unavailable(_)
                | StoreError::NotReplicated { .. }
                | StoreError::HistoryUnavailable(_)
                | StoreError::History(_)
        )
    }

    /// Whether an operator must mend something for this to pass (logged as an error).
    pub fn needs_an_operator(&self) -> bool {
        !matches!(
            self,
            StoreError::Unavailable(_) | StoreError::NotReplicated { .. } | StoreError::HistoryUnavailable(_)
        )
    }
}

impl From<redis::RedisError> for StoreError {
    fn from(e: redis::RedisError) -> StoreError {
        if not_ready(&e) { StoreError::Unavailable(e) } else { StoreError::Redis(e) }
    }
}

/// Whether an error means Redis cannot serve right now but will (unreachable, loading its
/// data, busy with a script, out of memory, or a cluster between masters), as opposed to
/// a request it refuses. Callers answer `503` with `Retry-After` and try again later.
pub fn not_ready(e: &redis::RedisError) -> bool {
    const NOT_READY: &[&str] =
        &["LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY", "NOREPLICAS", "OOM", "MOVED", "ASK"];
    if e.is_io_error()
        || e.is_timeout()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_unrecoverable_error()
        || e.kind() == redis::ErrorKind::ClusterConnectionNotFound
    {
        return true;
    }
    if e.code().is_some_and(|code| NOT_READY.contains(&code)) {
        return true;
    }
    // A pipeline's error, and a transaction's (`EXECABORT`), carry the errors of its commands.
    e.clone().into_server_errors().is_some_and(|errors| errors.iter().any(|(_, s)| NOT_READY.contains(&s.code())))
}
