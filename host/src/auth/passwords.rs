//! Passwords of people who sign in to the settings pages: Argon2id (memory-hard), in PHC
//! string form. Hashing takes tens of milliseconds on purpose: call these off the async
//! workers (`spawn_blocking`).

use argon2::Argon2;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};

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

#[cfg(test)]
mod tests {
    use super::*;

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
