//! A delivery's status as a customer reads it: a delivery that had an attempt and waits for
//! the next is "retrying", with when the next attempt is; the others as the API names them.

use super::html::badge;
use super::when::when;
use crate::domain::deliveries::{Delivery, Status};

/// The status badge of `d`: `retrying · next in 4 min`, or its status.
pub(super) fn delivery_status(d: &Delivery) -> String {
    match (&d.status, d.attempts.is_empty(), d.next_attempt_at.as_deref()) {
        (Status::Pending, false, Some(next)) => {
            format!(r#"<span class="badge retrying">retrying</span> <span class="next">next {}</span>"#, when(next))
        }
        (status, _, _) => badge(status.as_str()),
    }
}
