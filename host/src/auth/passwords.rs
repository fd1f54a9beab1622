//! Passwords of people who sign in to the settings pages: Argon2id (memory-hard), in PHC
//! string form. Hashing takes tens of milliseconds on purpose: call these off the async
//! workers (`spawn_blocking`), as [`Verifier`] does with a bound on how many run at once.

use std::sync::Arc;

use argon2::Argon2;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use tokio::sync::Semaphore;

/// Shortest password accepted.
pub const MIN_LENGTH: usize = 10;

/// The PHC string (`$argon2id$v=19$m=…`) of a password, with a random salt.
pub fn hash(password: &str) -> Option<String> {
    Argon2::default().hash_password(password.as_bytes()).ok().map(|h| h.to_string())
}

/// Whether `password` matches a stored PHC string.
pub fn verify(password: &str, phc: &str) -> bool {
    Argon2::default().verify_password(password.as_bytes(), phc).is_ok()
}

/// A stored hash to verify against when the account does not exist, so an unknown email
/// takes as long as a wrong password.
pub fn decoy() -> &'static str {
    static DECOY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DECOY.get_or_init(|| hash("decoy password, never valid").unwrap_or_default())
}

/// Checks passwords off the async workers, a bounded number at once: each Argon2 check
/// takes ~19 MiB and tens of milliseconds of a core, so unbounded parallel sign-ins could
/// exhaust memory and starve everything else.
#[derive(Debug)]
pub struct Verifier {
    slots: Arc<Semaphore>,
}

impl Verifier {
    /// At most `slots` checks at once (the number of cores is a good choice).
    pub fn new(slots: usize) -> Verifier {
        Verifier { slots: Arc::new(Semaphore::new(slots.max(1))) }
    }

    /// Whether `password` matches `phc`; `None` when every slot is busy (answer "try again").
    pub async fn verify(&self, password: String, phc: String) -> Option<bool> {
        let slot = self.slots.clone().try_acquire_owned().ok()?;
        let checked = tokio::task::spawn_blocking(move || {
            let ok = verify(&password, &phc);
            drop(slot);
            ok
        });
        Some(checked.await.unwrap_or(false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn checks_beyond_the_slots_are_refused_not_queued() {
        let verifier = Arc::new(Verifier::new(1));
        let phc = hash("correct horse battery").unwrap();
        let first = {
            let (verifier, phc) = (verifier.clone(), phc.clone());
            tokio::spawn(async move { verifier.verify("correct horse battery".into(), phc).await })
        };
        while verifier.slots.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!(verifier.verify("correct horse battery".into(), phc.clone()).await, None, "the one slot is taken");
        assert_eq!(first.await.unwrap(), Some(true));
        assert_eq!(verifier.verify("wrong password".into(), phc).await, Some(false), "the slot is free again");
    }

    #[test]
    fn hashes_verify_only_the_password() {
        let phc = hash("correct horse battery").unwrap();
        assert!(phc.starts_with("$argon2id$"));
        assert!(verify("correct horse battery", &phc));
        assert!(!verify("correct horse batterx", &phc));
        assert!(!verify("", &phc));
        assert_ne!(hash("correct horse battery").unwrap(), phc, "salted");
        assert!(!verify("x", "not a hash"));
        assert!(!verify("decoy", decoy()));
    }
}
