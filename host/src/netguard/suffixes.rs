//! Public suffixes: names under which anyone may register a name of their own (`com`,
//! `co.uk`, `github.io`), read from Mozilla's Public Suffix List as Debian's `publicsuffix`
//! package ships it (`host/data/public_suffix_list.dat`, MPL 2.0, ICANN and private
//! sections). A wildcard over such a name would let any of its registrants frame a page,
//! so a `frame_ancestors` wildcard must stand over a name below one.
//!
//! The list is parsed once, when a name is first asked about (a few milliseconds); names are
//! compared in their ASCII (punycode) form.

use std::collections::HashSet;
use std::sync::OnceLock;

/// The list, as shipped.
const LIST: &str = include_str!("../../data/public_suffix_list.dat");

/// The list's rules: plain names, wildcards (`*.ck`: every name one label below `ck`) and
/// exceptions to them (`!www.ck`).
#[derive(Debug, Default)]
struct Rules {
    names: HashSet<String>,
    wildcards: HashSet<String>,
    exceptions: HashSet<String>,
}

fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| {
        let mut rules = Rules::default();
        for line in LIST.lines() {
            let Some(rule) = line.split_whitespace().next().filter(|r| !r.starts_with("//")) else { continue };
            let (set, name) = if let Some(name) = rule.strip_prefix("*.") {
                (&mut rules.wildcards, name)
            } else if let Some(name) = rule.strip_prefix('!') {
                (&mut rules.exceptions, name)
            } else {
                (&mut rules.names, rule)
            };
            if let Some(ascii) = ascii(name) {
                set.insert(ascii);
            }
        }
        rules
    })
}

/// A name in its lower-case ASCII form (`None`: not a domain name).
fn ascii(name: &str) -> Option<String> {
    if name.is_ascii() {
        return Some(name.to_ascii_lowercase());
    }
    match url::Host::parse(name).ok()? {
        url::Host::Domain(d) => Some(d),
        _ => None,
    }
}

/// Whether `name` (ASCII, lower case, no trailing dot) is a public suffix: a rule of the
/// list names it, or a wildcard covers it and no exception takes it out. Every name of one
/// label is (the list's implicit `*` rule).
pub(crate) fn is_public_suffix(name: &str) -> bool {
    let rules = rules();
    let Some((_, parent)) = name.split_once('.') else { return true };
    if rules.exceptions.contains(name) {
        return false;
    }
    rules.names.contains(name) || rules.wildcards.contains(parent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_names_public_suffixes_of_both_sections() {
        for suffix in ["com", "uk", "co.uk", "com.au", "github.io", "herokuapp.com", "s3.amazonaws.com", "anything.ck"]
        {
            assert!(is_public_suffix(suffix), "{suffix}");
        }
        for name in ["example.com", "example.co.uk", "acme.github.io", "www.ck", "app.example.com"] {
            assert!(!is_public_suffix(name), "{name}");
        }
        // An internationalised suffix, compared in punycode (公司.cn).
        assert!(is_public_suffix("xn--55qx5d.cn"));
    }
}
