//! How `envelope-tables.dict` is made, and the check that it still is: the vocabulary of
//! `envelope.dict`, byte for byte, finished by zstd (`ZDICT_finalizeDictionary`) with
//! entropy tables measured on envelopes made here from the catalogue — every action, its
//! subject and a snapshot of the kind publishers send. With the tables in the dictionary a
//! frame does not build its own (about 3 µs of a 1 KB envelope's 7, and frames 10–13%
//! smaller; docs/performance-history.md).
//!
//! Stored events depend on the committed file, not on this code: if a zstd upgrade made the
//! test below fail, the file stays as it is (events stored with it must stay readable) and
//! only this check is brought up to date. To write the file anew — only for a new form with
//! a new tag — run the test with `WEIR_WRITE_DICTIONARY=<path>`.

use crate::catalog;

/// zstd's id for the dictionary (frames leave it out; above zstd's reserved range).
const DICT_ID: u32 = 0x5745_4952;
/// Actions the catalogue gained after the file was made: the samples are those of the
/// catalogue the file was made from (events stored with it must stay readable, so it stays).
const ADDED_SINCE: &[&str] = &["usage_limit_approaching"];
/// Envelopes the tables are measured on.
const SAMPLES: usize = 2_000;

/// A small deterministic generator (the samples must be the same on every machine).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
    fn id(&mut self, prefix: &str) -> String {
        const ALPHABET: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
        let tail: String = (0..22).map(|_| char::from(ALPHABET[self.below(ALPHABET.len())])).collect();
        format!("{prefix}_01M8{tail}")
    }
    fn time(&mut self) -> String {
        format!(
            "2026-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            1 + self.below(12),
            1 + self.below(28),
            self.below(24),
            self.below(60),
            self.below(60),
            self.below(1000)
        )
    }
    fn words(&mut self, n: usize) -> String {
        const WORDS: &[&str] = &[
            "pump",
            "valve",
            "seal",
            "inspect",
            "replace",
            "the",
            "and",
            "check",
            "leak",
            "bearing",
            "motor",
            "filter",
            "line",
            "north",
            "south",
            "site",
            "weekly",
            "monthly",
            "safety",
            "guard",
            "pressure",
            "temperature",
            "oil",
            "belt",
            "conveyor",
            "panel",
            "electrical",
            "fire",
            "extinguisher",
            "door",
            "hvac",
            "unit",
            "roof",
            "crack",
            "before",
            "after",
            "shift",
            "operator",
            "reported",
            "noise",
            "vibration",
            "calibrate",
            "gauge",
            "clean",
        ];
        (0..n).map(|_| self.pick(WORDS)).collect::<Vec<_>>().join(" ")
    }
}

/// One envelope as Weir builds it (`domain::events::Event::envelope`), of a random action.
fn sample(rng: &mut Lcg, actions: &[&str]) -> String {
    let action = rng.pick(actions);
    let key = catalog::snapshot_key_for(action).unwrap_or_else(|| rng.pick(catalog::SNAPSHOT_KEYS));
    let prefix: String = key.split('_').map(|w| &w[..1]).collect();
    let subject_id = rng.id(&prefix);
    let deleted = action.ends_with("_deleted");
    let status = rng.pick(&["open", "in_progress", "on_hold", "completed", "closed"]);
    let (title_words, description_words) = (2 + rng.below(4), rng.below(60));
    let mut snapshot = format!(
        r#"{{"id":"{subject_id}","title":"{}","status":"{status}","priority":{},"description":"{}","created_at":"{}","updated_at":"{}""#,
        rng.words(title_words),
        rng.below(5),
        rng.words(description_words),
        rng.time(),
        rng.time(),
    );
    if rng.below(3) == 0 {
        snapshot.push_str(&format!(r#","assignee":{{"id":"{}","name":"{}"}}"#, rng.id("usr"), rng.words(2)));
    }
    if rng.below(3) == 0 {
        snapshot.push_str(&format!(r#","location":{{"id":"{}","name":"{}"}}"#, rng.id("loc"), rng.words(2)));
    }
    if action == "report_export_completed" {
        snapshot.push_str(&format!(
            r#","format":"pdf","download_url":"https://files.weir.test/{}","exportable":{{"type":"Form","id":"{}"}}"#,
            rng.id("f"),
            rng.id("frm")
        ));
    }
    snapshot.push('}');
    format!(
        r#"{{"id":"{}","action":"{action}","created_at":"{}","organisation":{{"id":"{}"}},"creator":{{"id":"{}","name":"{}"}},"subject":{{"type":"{}","id":"{subject_id}"{}}},"{key}":{snapshot}}}"#,
        rng.id("evt"),
        rng.time(),
        rng.id("org"),
        rng.id("usr"),
        rng.words(2),
        catalog::subject_type(key),
        if deleted { r#","deleted":true"# } else { "" },
    )
}

/// The dictionary, made anew.
#[allow(unsafe_code)]
fn make() -> Vec<u8> {
    let content = super::DICTIONARY_RAW;
    let actions: Vec<&str> = catalog::actions().filter(|a| !ADDED_SINCE.contains(a)).collect();
    let mut rng = Lcg(0x5745_4952_0000_0001);
    let samples: Vec<String> = (0..SAMPLES).map(|_| sample(&mut rng, &actions)).collect();
    let joined: Vec<u8> = samples.concat().into_bytes();
    let sizes: Vec<usize> = samples.iter().map(String::len).collect();
    let mut out = vec![0u8; content.len() + 4096];
    let params = zstd_sys::ZDICT_params_t { compressionLevel: super::LEVEL, notificationLevel: 0, dictID: DICT_ID };
    // SAFETY: every pointer is to a live buffer of the length passed with it; `sizes` has
    // one entry per sample and they sum to `joined.len()`.
    let written = unsafe {
        zstd_sys::ZDICT_finalizeDictionary(
            out.as_mut_ptr().cast(),
            out.len(),
            content.as_ptr().cast(),
            content.len(),
            joined.as_ptr().cast(),
            sizes.as_ptr(),
            sizes.len() as u32,
            params,
        )
    };
    // SAFETY: a plain function of the returned code.
    assert_eq!(unsafe { zstd_sys::ZDICT_isError(written) }, 0, "ZDICT_finalizeDictionary failed");
    out.truncate(written);
    out
}

#[test]
fn the_tables_dictionary_is_the_vocabulary_with_tables_made_from_the_catalogue() {
    let made = make();
    if let Ok(path) = std::env::var("WEIR_WRITE_DICTIONARY") {
        std::fs::write(&path, &made).expect("write the dictionary");
    }
    assert!(made.ends_with(super::DICTIONARY_RAW), "the vocabulary is kept byte for byte, at the end");
    assert_eq!(
        made,
        super::DICTIONARY_TABLES,
        "envelope-tables.dict is not what this code makes (see this module's documentation)"
    );
}
