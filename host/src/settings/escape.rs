//! Text into HTML: every piece of text a page shows goes through [`esc`].

/// Escapes text for HTML element content and quoted attribute values.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The hidden CSRF field every form carries.
pub(crate) fn csrf_field(token: &str) -> String {
    format!(r#"<input type="hidden" name="_csrf" value="{}">"#, esc(token))
}
