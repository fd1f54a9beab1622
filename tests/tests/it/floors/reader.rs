//! The floors check's reader: a small lexer of Rust source (identifiers, `::`, braces,
//! strings and comments skipped), test modules taken out, and the imports of a file read
//! from its `use` trees and paths.

use std::collections::BTreeSet;

use super::File;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// The tokens of a Rust source, without comments, string and character literals.
pub(super) fn tokens(src: &str) -> Vec<Token> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            i = after_block_comment(&chars, i);
        } else if c == '"' || ((c == 'b' || c == 'c') && at(i + 1) == '"') {
            i += if c == '"' { 1 } else { 2 };
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if let Some(end) = after_raw_string(&chars, i) {
            i = end;
        } else if c == '\'' {
            i = after_quote(&chars, i);
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while at(i).is_alphanumeric() || at(i) == '_' {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
        } else if c.is_ascii_digit() {
            while at(i).is_alphanumeric() || at(i) == '_' || (at(i) == '.' && at(i + 1).is_ascii_digit()) {
                i += 1;
            }
        } else if c == ':' && at(i + 1) == ':' {
            out.push(Token::PathSep);
            i += 2;
        } else {
            out.push(Token::Punct(c));
            i += 1;
        }
    }
    out
}

/// Where a block comment opening at `i` ends (nested ones included).
fn after_block_comment(chars: &[char], mut i: usize) -> usize {
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut depth = 0;
    while i < chars.len() {
        if chars[i] == '/' && at(i + 1) == '*' {
            depth += 1;
            i += 2;
        } else if chars[i] == '*' && at(i + 1) == '/' {
            depth -= 1;
            i += 2;
            if depth == 0 {
                break;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// Where a raw string (`r"…"`, `r#"…"#`, `br"…"`) opening at `i` ends; `None` when none
/// opens there.
fn after_raw_string(chars: &[char], i: usize) -> Option<usize> {
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let start = match (at(i), at(i + 1)) {
        ('r', _) => i + 1,
        ('b', 'r') => i + 2,
        _ => return None,
    };
    let mut j = start;
    while at(j) == '#' {
        j += 1;
    }
    if at(j) != '"' {
        return None;
    }
    let hashes = j - start;
    let mut i = j + 1;
    while i < chars.len() {
        if chars[i] == '"' && (0..hashes).all(|k| at(i + 1 + k) == '#') {
            return Some(i + 1 + hashes);
        }
        i += 1;
    }
    Some(i)
}

/// Where a character literal, or a lifetime or label, opening at `i` ends.
fn after_quote(chars: &[char], mut i: usize) -> usize {
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    if at(i + 1) == '\\' {
        i += 2;
        while i < chars.len() && chars[i] != '\'' {
            i += 1;
        }
        i + 1
    } else if at(i + 2) == '\'' {
        i + 3
    } else {
        i += 1;
        while at(i).is_alphanumeric() || at(i) == '_' {
            i += 1;
        }
        i
    }
}

fn ident(t: Option<&Token>) -> Option<&str> {
    match t {
        Some(Token::Ident(s)) => Some(s),
        _ => None,
    }
}

/// Drops `#[cfg(test)]` items (a test module, a test-only import) from the tokens.
pub(super) fn without_tests(tokens: Vec<Token>) -> Vec<Token> {
    let cfg_test = [Token::Punct('#'), Token::Punct('['), ident_token("cfg"), Token::Punct('('), ident_token("test")];
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i..].starts_with(&cfg_test) {
            // Skip the attribute, then the item: up to its `;` or its closing brace.
            while i < tokens.len() && tokens[i] != Token::Punct(']') {
                i += 1;
            }
            i += 1;
            let mut depth = 0;
            while i < tokens.len() {
                match &tokens[i] {
                    Token::Punct('{') => depth += 1,
                    Token::Punct('}') => {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    Token::Punct(';') if depth == 0 => {
                        i += 1;
                        break;
                    }
                    _ => {}
                }
                i += 1;
            }
            continue;
        }
        out.push(tokens[i].clone());
        i += 1;
    }
    out
}

fn ident_token(s: &str) -> Token {
    Token::Ident(s.to_owned())
}

/// The leaf paths of a `use` tree starting at `tokens[i]`; returns them and where it ended.
fn use_tree(tokens: &[Token], mut i: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix.to_vec();
    if tokens.get(i) == Some(&Token::PathSep) {
        i += 1;
    }
    loop {
        match tokens.get(i) {
            Some(Token::Ident(s)) => {
                if s == "self" && !path.is_empty() {
                    // `a::b::{self}` names `a::b`.
                } else {
                    path.push(s.clone());
                }
                i += 1;
                if tokens.get(i) == Some(&Token::PathSep) {
                    i += 1;
                    continue;
                }
                if ident(tokens.get(i)) == Some("as") {
                    i += 2;
                }
                out.push(path);
                return i;
            }
            Some(Token::Punct('{')) => {
                i += 1;
                loop {
                    match tokens.get(i) {
                        Some(Token::Punct('}')) => return i + 1,
                        Some(Token::Punct(',')) => i += 1,
                        None => return i,
                        _ => i = use_tree(tokens, i, &path, out),
                    }
                }
            }
            Some(Token::Punct('*')) => {
                out.push(path);
                return i + 1;
            }
            _ => {
                out.push(path);
                return i;
            }
        }
    }
}

/// Every path a file names, made absolute (from the crate root).
pub(super) fn imports(file: &File, src: &str, modules: &BTreeSet<Vec<String>>) -> Vec<Vec<String>> {
    let tokens = without_tests(tokens(src));
    let mut out = Vec::new();
    // The module the tokens are in: the file's, then inline `mod x { … }` inside it.
    let mut scope: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let current = |scope: &[(String, usize)]| {
        let mut m = file.module.clone();
        m.extend(scope.iter().map(|(n, _)| n.clone()));
        m
    };
    let absolute = |path: &[String], here: &[String]| absolute(path, here, modules);
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            Token::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Token::Punct('}') => {
                if scope.last().is_some_and(|(_, d)| *d == depth) {
                    scope.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Token::Ident(kw) if kw == "mod" && tokens.get(i + 2) == Some(&Token::Punct('{')) => {
                if let Some(name) = ident(tokens.get(i + 1)) {
                    depth += 1;
                    scope.push((name.to_owned(), depth));
                }
                i += 3;
            }
            // A visibility restriction (`pub(in crate::x)`) names a module, imports nothing.
            Token::Ident(kw) if kw == "in" && i > 0 && tokens[i - 1] == Token::Punct('(') => {
                i += 1;
                while tokens.get(i).is_some_and(|t| *t != Token::Punct(')')) {
                    i += 1;
                }
            }
            Token::Ident(kw) if kw == "use" => {
                let mut leaves = Vec::new();
                i = use_tree(&tokens, i + 1, &[], &mut leaves);
                let here = current(&scope);
                out.extend(leaves.iter().filter_map(|p| absolute(p, &here)));
            }
            Token::Ident(first) if tokens.get(i + 1) == Some(&Token::PathSep) => {
                let prev_dollar = i > 0 && tokens[i - 1] == Token::Punct('$');
                let (path, j) = path_at(&tokens, first, i + 1);
                if !prev_dollar && let Some(abs) = absolute(&path, &current(&scope)) {
                    out.push(abs);
                }
                i = j;
            }
            _ => i += 1,
        }
    }
    out
}

/// The module a path names from module `here` (`crate::`, `self::`, `super::` or a child
/// module of `here` that exists), or `None` for an outside crate's.
fn absolute(path: &[String], here: &[String], modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    let mut base = match first.as_str() {
        "crate" => Vec::new(),
        "self" => here.to_vec(),
        "super" => here[..here.len().saturating_sub(1)].to_vec(),
        child => {
            let mut m = here.to_vec();
            m.push(child.to_owned());
            if !modules.contains(&m) {
                return None;
            }
            m
        }
    };
    for seg in rest {
        if seg == "super" {
            base.pop();
        } else {
            base.push(seg.clone());
        }
    }
    Some(base)
}

/// The path `first::a::b` whose first `::` is at `j`, and the token after it.
fn path_at(tokens: &[Token], first: &str, mut j: usize) -> (Vec<String>, usize) {
    let mut path = vec![first.to_owned()];
    while tokens.get(j) == Some(&Token::PathSep) {
        match ident(tokens.get(j + 1)) {
            Some(s) => path.push(s.to_owned()),
            None => break,
        }
        j += 2;
    }
    (path, j)
}
