//! `weir admin filter test`: a filter checked as saving it would, and tried on an event
//! when one is given (needs no Redis).

use serde_json::json;

/// `weir admin filter test`: the filter checked, and tried on the event when one is given.
pub(super) fn filter_test(source: &str, event: Option<&std::path::Path>) -> Result<serde_json::Value, String> {
    use std::io::Read;
    let filter = crate::filters::Filter::compile(source).map_err(|e| format!("the filter {e}"))?;
    let bound_us = filter.cost_bound().div_ceil(1000);
    let mut out = json!({"filter": source, "valid": true, "cost_bound_us": bound_us});
    let Some(path) = event else { return Ok(out) };
    let limit = crate::filters::EVENT_BOUND + 1;
    let mut text = String::new();
    let read = if path.as_os_str() == "-" {
        std::io::stdin().take(limit).read_to_string(&mut text)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(limit).read_to_string(&mut text))
    };
    read.map_err(|e| format!("cannot read the event from {}: {e}", path.display()))?;
    let values = if text.len() as u64 >= limit {
        Err(format!("the event is larger than {} bytes", limit - 1))
    } else {
        crate::filters::Envelope::parse(&text)
    };
    let verdict = match values {
        Ok(values) => filter.evaluate(&values),
        Err(e) => crate::filters::Selection::Error(e),
    };
    let tried = crate::domain::filtering::tried(verdict);
    out["match"] = json!(tried.matched);
    out["error"] = json!(tried.error);
    Ok(out)
}
