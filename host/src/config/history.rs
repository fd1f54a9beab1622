//! Where ended work goes (contract §8 "History in PostgreSQL"): `history_url`
//! (`WEIR_HISTORY_URL`, a `postgres://` or `postgresql://` URL in libpq's form, `sslmode` in
//! its query) and `history_hot` (`WEIR_HISTORY_HOT`: how long ended deliveries and accepted
//! events stay in Redis first). The URL's password is never printed.

use std::fmt;
use std::time::Duration;

/// How a connection to PostgreSQL is secured (`sslmode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// `disable` (the default here; also `allow` and `prefer`, which libpq would try
    /// without TLS as well): no TLS.
    Disable,
    /// `require`: TLS. Unlike libpq, the certificate is checked as for `verify-full`
    /// (a private CA goes in `WEIR_EXTRA_CA`): Weir never sends a password over TLS it
    /// has not verified.
    Require,
    /// `verify-ca`, `verify-full`: TLS, the certificate checked against the system's roots
    /// (and `WEIR_EXTRA_CA`), and its name.
    Verify,
}

/// The history store's settings.
#[derive(Clone, PartialEq, Eq)]
pub struct HistorySettings {
    /// The URL as given (with its password): only the client reads it.
    pub url: String,
    pub ssl: SslMode,
    /// How long an ended delivery (since it ended) or an accepted event stays in Redis.
    pub hot: Duration,
}

impl HistorySettings {
    /// Checks `url` (`hot` is checked by the caller).
    pub fn parse(url: &str, hot: Duration) -> Result<HistorySettings, String> {
        let shape =
            "must be a postgres:// or postgresql:// URL (postgres://user:password@host:port/database?sslmode=disable)";
        let parsed = url::Url::parse(url).map_err(|_| shape.to_owned())?;
        if !matches!(parsed.scheme(), "postgres" | "postgresql") || parsed.host_str().is_none_or(str::is_empty) {
            return Err(shape.to_owned());
        }
        let ssl = match parsed.query_pairs().find(|(k, _)| k == "sslmode").map(|(_, v)| v.into_owned()).as_deref() {
            None | Some("disable" | "allow" | "prefer") => SslMode::Disable,
            Some("require") => SslMode::Require,
            Some("verify-ca" | "verify-full") => SslMode::Verify,
            Some(other) => {
                return Err(format!(
                    "has sslmode={other}: use disable, allow, prefer, require, verify-ca or verify-full"
                ));
            }
        };
        Ok(HistorySettings { url: url.to_owned(), ssl, hot })
    }

    /// `host:port/database`, for logs and errors (no user, no password).
    pub fn describe(&self) -> String {
        match url::Url::parse(&self.url) {
            Ok(u) => format!("{}:{}{}", u.host_str().unwrap_or("?"), u.port().unwrap_or(5432), u.path()),
            Err(_) => "(unreadable URL)".to_owned(),
        }
    }
}

impl fmt::Debug for HistorySettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HistorySettings")
            .field("at", &self.describe())
            .field("ssl", &self.ssl)
            .field("hot", &self.hot)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_url_is_checked_and_its_password_never_printed() {
        let hot = Duration::from_secs(600);
        let h = HistorySettings::parse("postgres://weir:s3cret@127.0.0.1:5433/weir?sslmode=require", hot).unwrap();
        assert_eq!((h.ssl, h.describe()), (SslMode::Require, "127.0.0.1:5433/weir".to_owned()));
        assert!(!format!("{h:?}").contains("s3cret"), "{h:?}");
        assert_eq!(HistorySettings::parse("postgresql://db/weir", hot).unwrap().ssl, SslMode::Disable);
        assert!(HistorySettings::parse("mysql://db/weir", hot).is_err());
        assert!(HistorySettings::parse("postgres://db/weir?sslmode=sometimes", hot).unwrap_err().contains("sslmode"));
        assert!(HistorySettings::parse("not a url", hot).is_err());
    }
}
