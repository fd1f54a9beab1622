//! What a portal link shows of the operator (contract §10): `brand` (`{"name", "logo_url"}`,
//! shown instead of Weir's), `return_url` (a "back" link to the operator's product) and
//! `refresh_url` (where a link that has expired or was used sends its frame, so that the
//! operator's backend makes a new one instead of the customer reading "expired"), and
//! `theme` (`light` or `dark`; left out, the pages follow the browser's preference). Every URL
//! is the operator's own: `https`, or `http` on loopback (for development), at most 2,048
//! characters, no user or password in it.

use std::net::IpAddr;

use super::fields::{Fields, bounded_text};
use crate::store::tenants::users::PortalLook;

/// Longest URL a link keeps.
const MAX_URL: usize = 2048;
/// Longest brand name, in characters.
const MAX_NAME: usize = 60;

/// Reads `brand`, `return_url`, `refresh_url` and `theme` from a link request (each optional),
/// recording an error on each field that is not right.
pub(super) fn read(fields: &mut Fields) -> PortalLook {
    let mut look = PortalLook {
        return_url: url_field(fields, "return_url"),
        refresh_url: url_field(fields, "refresh_url"),
        theme: fields.string("theme"),
        ..PortalLook::default()
    };
    if look.theme.as_deref().is_some_and(|t| t != "light" && t != "dark") {
        fields.error("theme", "must be \"light\" or \"dark\" (leave it out to follow the browser)");
        look.theme = None;
    }
    let Some(brand) = fields.object("brand", false) else { return look };
    let mut inner = Fields::new(brand);
    look.brand_name = inner.required_string("name").and_then(|n| bounded_text(&mut inner, "name", n, MAX_NAME));
    look.logo_url = url_field(&mut inner, "logo_url");
    for name in inner.remaining() {
        inner.error(name, "unknown field");
    }
    for error in inner.into_errors() {
        fields.error(format!("brand.{}", error.field), error.message);
    }
    look
}

fn url_field(fields: &mut Fields, name: &str) -> Option<String> {
    let text = fields.string(name)?;
    let url = operator_url(&text);
    if url.is_none() {
        fields.error(
            name,
            format!(
                "must be an https URL (or http on loopback) of at most {MAX_URL} characters, with no user or password"
            ),
        );
    }
    url
}

/// `text` as a URL of the operator's (`https`, or `http` to a loopback host), normalised;
/// `None` when it is not one.
pub(crate) fn operator_url(text: &str) -> Option<String> {
    if text.len() > MAX_URL {
        return None;
    }
    let url = url::Url::parse(text).ok()?;
    let host = url.host()?;
    let loopback = match host {
        url::Host::Domain(name) => name == "localhost" || name.ends_with(".localhost"),
        url::Host::Ipv4(ip) => IpAddr::V4(ip).is_loopback(),
        url::Host::Ipv6(ip) => IpAddr::V6(ip).is_loopback(),
    };
    let allowed = url.scheme() == "https" || (url.scheme() == "http" && loopback);
    let plain = url.username().is_empty() && url.password().is_none();
    (allowed && plain).then(|| url.to_string()).filter(|u| u.len() <= MAX_URL)
}

/// The origin of an operator's URL (`https://cdn.example.com`), for the pages' image policy.
pub(crate) fn origin(url: &str) -> Option<String> {
    let origin = url::Url::parse(url).ok()?.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn read_of(v: Value) -> (PortalLook, Vec<String>) {
        let mut fields = Fields::new(v.as_object().cloned().unwrap_or_default());
        let look = read(&mut fields);
        (look, fields.into_errors().into_iter().map(|e| e.field).collect())
    }

    #[test]
    fn operator_urls_are_https_or_http_on_loopback() {
        assert_eq!(
            operator_url("https://app.example.com/portal?x=1").as_deref(),
            Some("https://app.example.com/portal?x=1")
        );
        assert_eq!(operator_url("http://127.0.0.2:9000/r").as_deref(), Some("http://127.0.0.2:9000/r"));
        assert_eq!(operator_url("http://[::1]/r").as_deref(), Some("http://[::1]/r"));
        assert_eq!(operator_url("http://localhost:3000").as_deref(), Some("http://localhost:3000/"));
        for bad in [
            "http://app.example.com/",
            "javascript:alert(1)",
            "data:text/html,x",
            "https://user:pw@app.example.com/",
            "ftp://app.example.com/",
            "/relative",
            "",
        ] {
            assert_eq!(operator_url(bad), None, "{bad}");
        }
        assert_eq!(operator_url(&format!("https://a.example/{}", "x".repeat(MAX_URL))), None);
        assert_eq!(origin("https://cdn.example.com:8443/logo.svg").as_deref(), Some("https://cdn.example.com:8443"));
    }

    #[test]
    fn a_look_is_read_field_by_field() {
        let (look, errors) = read_of(json!({"brand": {"name": " Acme ", "logo_url": "https://cdn.acme.example/l.svg"},
            "return_url": "https://app.acme.example/settings", "refresh_url": "http://127.0.0.1:8000/new-link",
            "theme": "dark"}));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(look.brand_name.as_deref(), Some("Acme"));
        assert_eq!(look.logo_url.as_deref(), Some("https://cdn.acme.example/l.svg"));
        assert_eq!(look.return_url.as_deref(), Some("https://app.acme.example/settings"));
        assert_eq!(look.refresh_url.as_deref(), Some("http://127.0.0.1:8000/new-link"));
        assert_eq!(look.theme.as_deref(), Some("dark"));
        let (_, errors) = read_of(json!({"brand": {"logo_url": "http://cdn.example/l.png", "colour": 1},
            "return_url": "javascript:history.back()", "refresh_url": 5, "theme": "blue"}));
        assert_eq!(errors, ["return_url", "refresh_url", "theme", "brand.name", "brand.logo_url", "brand.colour"]);
        let (_, errors) = read_of(json!({"brand": "Acme"}));
        assert_eq!(errors, ["brand"]);
        let (_, errors) = read_of(json!({"brand": {"name": "x".repeat(61)}}));
        assert_eq!(errors, ["brand.name"]);
    }
}
