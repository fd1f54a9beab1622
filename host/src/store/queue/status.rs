//! A delivery's status (contract §2): the queue writes it, every reader shows it.

use serde::Serialize;

/// A delivery's status (contract §2), shared by the queue and the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pending,
    Succeeded,
    Failed,
    Filtered,
    Cancelled,
}

impl Status {
    pub fn parse(text: &str) -> Option<Status> {
        Some(match text {
            "pending" => Status::Pending,
            "succeeded" => Status::Succeeded,
            "failed" => Status::Failed,
            "filtered" => Status::Filtered,
            "cancelled" => Status::Cancelled,
            _ => return None,
        })
    }

    /// The status a row's `s` field says: absent or empty is `pending`; `None` when it
    /// cannot be read.
    pub fn stored(s: Option<&str>) -> Option<Status> {
        s.filter(|s| !s.is_empty()).map_or(Some(Status::Pending), Status::parse)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Succeeded => "succeeded",
            Status::Failed => "failed",
            Status::Filtered => "filtered",
            Status::Cancelled => "cancelled",
        }
    }
}
