//! An event as stored: `W3`, when it was accepted (ms, 8 bytes big-endian), its `created_at`
//! — `0xFF` and the time (ms, 8 bytes) when it is in the contract's form (it always is once
//! validated), else its length (one byte) and the text — then the envelope compressed with
//! zstd and a dictionary of Weir's own envelope vocabulary (`envelope.dict`: the envelope's
//! keys, id prefixes, the catalogue's actions and snapshot keys), its frame without the magic
//! number and the dictionary's id (the same for every event): about a third of a typical
//! envelope's size, and less for small ones.
//!
//! An event published with a W3C trace context is stored as `W4`: the same, with the trace
//! (`crate::trace::TraceContext::encode`) after `created_at`.

use crate::trace::TraceContext;

/// zstd level: fast, and most of the gain on small JSON documents.
const LEVEL: i32 = 3;

/// An event as stored: what an attempt needs of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// The event's `created_at` (sent as `X-Webhook-Timestamp`).
    pub created_at: String,
    /// The envelope, as published.
    pub envelope: String,
    /// When Weir accepted it (ms): the time of its deliveries' ids.
    pub accepted_ms: u64,
    /// The publisher's trace context, when it sent one.
    pub trace: Option<TraceContext>,
}

/// The tag of the stored form (its version: events of an older form are not read), and the
/// byte saying a `created_at` follows as a time.
const TAG: &[u8; 2] = b"W3";
/// The tag of the same form with a trace context.
const TAG_TRACED: &[u8; 2] = b"W4";
const CREATED_MS: u8 = 0xFF;
/// zstd's magic number, which stored frames leave out.
const ZSTD_MAGIC: [u8; 4] = 0xFD2F_B528_u32.to_le_bytes();

impl StoredEvent {
    /// The stored form of an event.
    pub fn encode(&self) -> Vec<u8> {
        let compressed = CONTEXTS.with_borrow_mut(|c| c.compress(self.envelope.as_bytes()));
        let frame = compressed.strip_prefix(&ZSTD_MAGIC).unwrap_or(&compressed);
        let mut out = Vec::with_capacity(20 + frame.len());
        out.extend_from_slice(if self.trace.is_some() { TAG_TRACED } else { TAG });
        out.extend_from_slice(&self.accepted_ms.to_be_bytes());
        match crate::time::parse_rfc3339(&self.created_at)
            .filter(|ms| crate::time::format_millis(*ms) == self.created_at)
        {
            Some(ms) => {
                out.push(CREATED_MS);
                out.extend_from_slice(&ms.to_be_bytes());
            }
            None => {
                let text = &self.created_at.as_bytes()[..self.created_at.len().min(usize::from(CREATED_MS) - 1)];
                out.push(text.len() as u8);
                out.extend_from_slice(text);
            }
        }
        if let Some(trace) = &self.trace {
            trace.encode(&mut out);
        }
        out.extend_from_slice(frame);
        out
    }

    /// The trace its deliveries continue: the publisher's, or the one Weir starts for it.
    pub fn trace_of(&self, event_id: &str) -> TraceContext {
        self.trace.clone().unwrap_or_else(|| TraceContext::for_event(event_id))
    }

    /// Reads a stored event; `None` if it is not one.
    pub fn decode(bytes: &[u8]) -> Option<StoredEvent> {
        let (traced, rest) = match bytes.strip_prefix(TAG) {
            Some(rest) => (false, rest),
            None => (true, bytes.strip_prefix(TAG_TRACED)?),
        };
        let (ms, rest) = rest.split_first_chunk::<8>()?;
        let (&len, rest) = rest.split_first()?;
        let (created_at, frame) = if len == CREATED_MS {
            let (ms, rest) = rest.split_first_chunk::<8>()?;
            (crate::time::format_millis(u64::from_be_bytes(*ms)), rest)
        } else {
            let (text, rest) = rest.split_at_checked(usize::from(len))?;
            (String::from_utf8(text.to_vec()).ok()?, rest)
        };
        let (trace, frame) = match traced {
            true => TraceContext::decode(frame).map(|(t, rest)| (Some(t), rest))?,
            false => (None, frame),
        };
        let mut whole = Vec::with_capacity(4 + frame.len());
        whole.extend_from_slice(&ZSTD_MAGIC);
        whole.extend_from_slice(frame);
        let envelope = CONTEXTS.with_borrow_mut(|c| c.decompress(&whole))?;
        Some(StoredEvent {
            created_at,
            envelope: String::from_utf8(envelope).ok()?,
            accepted_ms: u64::from_be_bytes(*ms),
            trace,
        })
    }
}

/// Largest envelope a stored event may hold, once decompressed.
const MAX_ENVELOPE: u64 = 64 * 1024 * 1024;

/// The dictionary every stored event of the form [`TAG`] is compressed with. Stored events
/// depend on it byte for byte: never edit it; a new vocabulary is a new file and a new tag.
const DICTIONARY: &[u8] = include_bytes!("../envelope.dict");

/// zstd's contexts, made once per thread: making one costs far more than compressing a
/// small document.
struct Contexts {
    compressor: Option<zstd::bulk::Compressor<'static>>,
    decompressor: Option<zstd::bulk::Decompressor<'static>>,
}

thread_local! {
    static CONTEXTS: std::cell::RefCell<Contexts> =
        const { std::cell::RefCell::new(Contexts { compressor: None, decompressor: None }) };
}

impl Contexts {
    fn compress(&mut self, data: &[u8]) -> Vec<u8> {
        if self.compressor.is_none() {
            self.compressor = zstd::bulk::Compressor::with_dictionary(LEVEL, DICTIONARY)
                .and_then(|mut c| c.set_parameter(zstd::zstd_safe::CParameter::DictIdFlag(false)).map(|()| c))
                .ok();
        }
        self.compressor.as_mut().and_then(|c| c.compress(data).ok()).unwrap_or_default()
    }

    /// The frame says its content size (bulk compression writes it): exactly that much is
    /// allocated.
    fn decompress(&mut self, frame: &[u8]) -> Option<Vec<u8>> {
        let size = zstd::zstd_safe::get_frame_content_size(frame).ok()??;
        if size > MAX_ENVELOPE {
            return None;
        }
        if self.decompressor.is_none() {
            self.decompressor = zstd::bulk::Decompressor::with_dictionary(DICTIONARY).ok();
        }
        self.decompressor.as_mut()?.decompress(frame, size as usize).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dictionary_is_the_one_stored_events_were_written_with() {
        // Changing it would make every stored event unreadable: add a new version instead.
        use sha2::Digest;
        assert_eq!(
            hex::encode(sha2::Sha256::digest(DICTIONARY)),
            "76b71ee02019e64e4c22a594d950347237d4b93d95de1b8fe8529cd06c7fbe9d",
        );
    }

    #[test]
    fn a_stored_event_reads_back_and_is_smaller() {
        let envelope =
            format!(r#"{{"id":"evt_1","work_order":{{"description":"{}"}}}}"#, "Replace the seal. ".repeat(40));
        let event = StoredEvent {
            created_at: "2026-11-22T11:00:38.123Z".into(),
            envelope,
            accepted_ms: 1_700_000_000_000,
            trace: None,
        };
        let stored = event.encode();
        assert!(stored.len() < event.envelope.len() / 2, "{} of {}", stored.len(), event.envelope.len());
        assert_eq!(StoredEvent::decode(&stored).as_ref(), Some(&event));
        assert_eq!(StoredEvent::decode(b"not an event"), None);
        assert_eq!(StoredEvent::decode(b"W3"), None);
        assert_eq!(StoredEvent::decode(b"W3\0\0\0\0\0\0\0\0\xFF\0"), None);
        // A created_at in another form is kept as it was written.
        let odd = StoredEvent { created_at: "2026-11-22T11:00:38Z".into(), ..event.clone() };
        assert_eq!(StoredEvent::decode(&odd.encode()).as_ref(), Some(&odd));
        assert_eq!(odd.encode().len(), stored.len() + 20 - 8, "the canonical form is stored as 8 bytes");
        // With a publisher's trace context: `W4`, the trace kept.
        let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let traced = StoredEvent { trace: TraceContext::parse(parent, Some("k=v")), ..event.clone() };
        let bytes = traced.encode();
        assert!(bytes.starts_with(b"W4"));
        assert_eq!(StoredEvent::decode(&bytes).as_ref(), Some(&traced));
        assert_eq!(traced.trace_of("evt_1").trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(event.trace_of("evt_1"), TraceContext::for_event("evt_1"));
    }
}
