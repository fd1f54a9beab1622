//! An event as stored: a tag (below), when it was accepted (ms, 8 bytes big-endian), its
//! `created_at` — `0xFF` and the time (ms, 8 bytes) when it is in the contract's form (it
//! always is once validated), else its length (one byte) and the text — then, for a traced
//! form, the publisher's trace context (`crate::trace::TraceContext::encode`), then the
//! envelope compressed with zstd and a dictionary of Weir's own envelope vocabulary (the
//! envelope's keys, id prefixes, the catalogue's actions and snapshot keys), its frame
//! without the magic number and the dictionary's id (the same for every event): about a
//! third of a typical envelope's size, and less for small ones.
//!
//! | tag | dictionary | trace |
//! |---|---|---|
//! | `W3` | `envelope.dict` (the vocabulary alone) | — |
//! | `W4` | `envelope.dict` | the publisher's |
//! | `W5` | `envelope-tables.dict` (the same vocabulary with entropy tables) | — |
//! | `W6` | `envelope-tables.dict` | the publisher's |
//!
//! Every form is read. `W5`/`W6` compress faster (a frame no longer builds its own Huffman
//! and FSE tables: ~3 µs of a 1 KB envelope's ~7) and smaller (10–13%), but a process of an
//! earlier release cannot read them, so they ship in two releases (docs/operations.md,
//! "Upgrading"): this one reads them and still writes `W3`/`W4` ([`WRITES`]); the next one
//! writes them.

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

/// The dictionary a stored event's envelope is compressed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dictionary {
    /// `envelope.dict`: `W3`, `W4`.
    Vocabulary,
    /// `envelope-tables.dict`: `W5`, `W6`.
    Tables,
}

/// The form this release writes. `Tables` is read by this release and written by the next
/// (two releases, so that every process of a rolling upgrade reads what any writes).
pub const WRITES: Dictionary = Dictionary::Vocabulary;

impl Dictionary {
    /// The tag of the stored form (its version: events of an older form are not read).
    fn tag(self, traced: bool) -> &'static [u8; 2] {
        match (self, traced) {
            (Dictionary::Vocabulary, false) => b"W3",
            (Dictionary::Vocabulary, true) => b"W4",
            (Dictionary::Tables, false) => b"W5",
            (Dictionary::Tables, true) => b"W6",
        }
    }

    /// The dictionary and whether a trace follows, of a stored form's tag.
    fn of_tag(tag: [u8; 2]) -> Option<(Dictionary, bool)> {
        Some(match &tag {
            b"W3" => (Dictionary::Vocabulary, false),
            b"W4" => (Dictionary::Vocabulary, true),
            b"W5" => (Dictionary::Tables, false),
            b"W6" => (Dictionary::Tables, true),
            _ => return None,
        })
    }

    fn bytes(self) -> &'static [u8] {
        match self {
            Dictionary::Vocabulary => DICTIONARY_RAW,
            Dictionary::Tables => DICTIONARY_TABLES,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The byte saying a `created_at` follows as a time.
const CREATED_MS: u8 = 0xFF;
/// zstd's magic number, which stored frames leave out.
const ZSTD_MAGIC: [u8; 4] = 0xFD2F_B528_u32.to_le_bytes();

impl StoredEvent {
    /// The stored form of an event (the form this release writes, [`WRITES`]).
    pub fn encode(&self) -> Vec<u8> {
        self.encode_with(WRITES)
    }

    /// The stored form of an event, compressed with `dictionary`.
    pub fn encode_with(&self, dictionary: Dictionary) -> Vec<u8> {
        let compressed = CONTEXTS.with_borrow_mut(|c| c.compress(dictionary, self.envelope.as_bytes()));
        let frame = compressed.strip_prefix(&ZSTD_MAGIC).unwrap_or(&compressed);
        let mut out = Vec::with_capacity(20 + frame.len());
        out.extend_from_slice(dictionary.tag(self.trace.is_some()));
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
        let (tag, rest) = bytes.split_first_chunk::<2>()?;
        let (dictionary, traced) = Dictionary::of_tag(*tag)?;
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
        let envelope = CONTEXTS.with_borrow_mut(|c| c.decompress(dictionary, &whole))?;
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

/// The dictionary of `W3`/`W4`. Stored events depend on it byte for byte: never edit it; a
/// new vocabulary is a new file and a new tag.
const DICTIONARY_RAW: &[u8] = include_bytes!("../envelope.dict");
/// The dictionary of `W5`/`W6`: the same vocabulary, finished with entropy tables (how it
/// is made, and the check that it still is: `stored/tables.rs`). Never edit it either.
const DICTIONARY_TABLES: &[u8] = include_bytes!("../envelope-tables.dict");

/// zstd's contexts, one of each per dictionary, made once per thread when first needed:
/// making one costs far more than compressing a small document.
struct Contexts {
    compressors: [Option<zstd::bulk::Compressor<'static>>; 2],
    decompressors: [Option<zstd::bulk::Decompressor<'static>>; 2],
}

thread_local! {
    static CONTEXTS: std::cell::RefCell<Contexts> =
        const { std::cell::RefCell::new(Contexts { compressors: [None, None], decompressors: [None, None] }) };
}

impl Contexts {
    fn compress(&mut self, dictionary: Dictionary, data: &[u8]) -> Vec<u8> {
        let compressor = &mut self.compressors[dictionary.index()];
        if compressor.is_none() {
            *compressor = zstd::bulk::Compressor::with_dictionary(LEVEL, dictionary.bytes())
                .and_then(|mut c| c.set_parameter(zstd::zstd_safe::CParameter::DictIdFlag(false)).map(|()| c))
                .ok();
        }
        compressor.as_mut().and_then(|c| c.compress(data).ok()).unwrap_or_default()
    }

    /// The frame says its content size (bulk compression writes it): exactly that much is
    /// allocated.
    fn decompress(&mut self, dictionary: Dictionary, frame: &[u8]) -> Option<Vec<u8>> {
        let size = zstd::zstd_safe::get_frame_content_size(frame).ok()??;
        if size > MAX_ENVELOPE {
            return None;
        }
        let decompressor = &mut self.decompressors[dictionary.index()];
        if decompressor.is_none() {
            *decompressor = zstd::bulk::Decompressor::with_dictionary(dictionary.bytes()).ok();
        }
        decompressor.as_mut()?.decompress(frame, size as usize).ok()
    }
}

#[cfg(test)]
mod tables;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dictionaries_are_the_ones_stored_events_were_written_with() {
        // Changing one would make every event stored with it unreadable: add a new form instead.
        use sha2::Digest;
        assert_eq!(
            hex::encode(sha2::Sha256::digest(DICTIONARY_RAW)),
            "76b71ee02019e64e4c22a594d950347237d4b93d95de1b8fe8529cd06c7fbe9d",
        );
        assert_eq!(
            hex::encode(sha2::Sha256::digest(DICTIONARY_TABLES)),
            "b8c663753953bbf51cc8fb622095712db6de0de2728470fd9c3690a12f4ae322",
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

    #[test]
    fn every_form_reads_back_and_the_tables_dictionary_stores_smaller() {
        let envelope = concat!(
            r#"{"id":"evt_01M8ZK3Q","action":"work_order_created","created_at":"2026-11-22T11:00:38.123Z","#,
            r#""organisation":{"id":"org_01M8AB"},"creator":{"id":"usr_7","name":"Ana Ruiz"},"#,
            r#""subject":{"type":"WorkOrder","id":"wo_812"},"work_order":{"id":"wo_812","title":"Pump "#,
            r#"maintenance","status":"open","priority":2,"description":"Inspect the seal and replace the "#,
            r#"bearing before the weekly shift","created_at":"2026-11-22T11:00:38.123Z"}}"#
        );
        let plain = StoredEvent {
            created_at: "2026-11-22T11:00:38.123Z".into(),
            envelope: envelope.into(),
            accepted_ms: 1_700_000_000_000,
            trace: None,
        };
        let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let traced = StoredEvent { trace: TraceContext::parse(parent, None), ..plain.clone() };
        for (event, dictionary, tag) in [
            (&plain, Dictionary::Vocabulary, b"W3"),
            (&traced, Dictionary::Vocabulary, b"W4"),
            (&plain, Dictionary::Tables, b"W5"),
            (&traced, Dictionary::Tables, b"W6"),
        ] {
            let bytes = event.encode_with(dictionary);
            assert!(bytes.starts_with(tag), "{dictionary:?}");
            assert_eq!(StoredEvent::decode(&bytes).as_ref(), Some(event), "{dictionary:?}");
        }
        // This release writes the vocabulary's forms: a process of the release before reads them.
        assert!(plain.encode().starts_with(b"W3") && traced.encode().starts_with(b"W4"));
        let (vocabulary, tables) = (plain.encode_with(Dictionary::Vocabulary), plain.encode_with(Dictionary::Tables));
        assert!(tables.len() < vocabulary.len(), "{} against {}", tables.len(), vocabulary.len());
        // A frame of one dictionary is not read as the other's, nor an unknown tag.
        let mut swapped = tables.clone();
        swapped[..2].copy_from_slice(b"W3");
        assert_ne!(StoredEvent::decode(&swapped).as_ref(), Some(&plain));
        swapped[..2].copy_from_slice(b"W7");
        assert_eq!(StoredEvent::decode(&swapped), None);
    }
}
