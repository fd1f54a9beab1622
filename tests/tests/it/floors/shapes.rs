//! Shapes the sizes must not be met by: no parameter a tuple of more than two values (name
//! them: a request type), and no type whose inherent `impl` is spread over several files
//! (one type, one file: a reader finds all it does in one place).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::reader::{Token, imports, tokens, without_tests};
use super::{File, crate_files, host_src, source_files};

/// The most values a tuple parameter may carry.
pub(super) const TUPLE_FIELDS: usize = 2;

/// `fn` signatures of `tokens` whose parameters include a tuple of more than
/// [`TUPLE_FIELDS`] values: the function's name.
pub(super) fn packed_parameters(tokens: &[Token]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let (Token::Ident(kw), Some(Token::Ident(name))) = (t, tokens.get(i + 1)) else { continue };
        if kw != "fn" {
            continue;
        }
        // The parameter list: from the first `(` after the name (past any generics).
        let Some(open) = (i + 2..tokens.len()).find(|&j| tokens[j] == Token::Punct('(')) else { continue };
        let params = balanced(tokens, open);
        if split_top(params).iter().any(|param| tuple_width(type_of(param)) > TUPLE_FIELDS) {
            out.push(name.clone());
        }
    }
    out
}

/// The tokens inside the bracket that opens at `open`.
fn balanced(tokens: &[Token], open: usize) -> &[Token] {
    let mut depth = 0;
    for (j, t) in tokens.iter().enumerate().skip(open) {
        match t {
            Token::Punct('(' | '[' | '{') => depth += 1,
            Token::Punct(')' | ']' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return &tokens[open + 1..j];
                }
            }
            _ => {}
        }
    }
    &tokens[open + 1..]
}

/// `tokens` split at commas outside every bracket (and `<…>`).
fn split_top(tokens: &[Token]) -> Vec<&[Token]> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (j, t) in tokens.iter().enumerate() {
        match t {
            Token::Punct('(' | '[' | '{' | '<') => depth += 1,
            Token::Punct(')' | ']' | '}' | '>') => depth -= 1,
            Token::Punct(',') if depth == 0 => {
                out.push(&tokens[start..j]);
                start = j + 1;
            }
            _ => {}
        }
    }
    if start < tokens.len() {
        out.push(&tokens[start..]);
    }
    out
}

/// A parameter's type: what follows its first `:` outside brackets.
fn type_of(param: &[Token]) -> &[Token] {
    let mut depth = 0;
    for (j, t) in param.iter().enumerate() {
        match t {
            Token::Punct('(' | '[' | '<') => depth += 1,
            Token::Punct(')' | ']' | '>') => depth -= 1,
            Token::Punct(':') if depth == 0 => return &param[j + 1..],
            _ => {}
        }
    }
    &[]
}

/// How many values a type that is a tuple holds (behind any `&`); 0 for another type.
fn tuple_width(ty: &[Token]) -> usize {
    let start = ty.iter().position(|t| *t != Token::Punct('&')).unwrap_or(0);
    if ty.get(start) != Some(&Token::Punct('(')) {
        return 0;
    }
    split_top(balanced(ty, start)).into_iter().filter(|part| !part.is_empty()).count()
}

/// Types whose inherent `impl` blocks stand in more than one file: the type (as the file
/// that defines it names it) and the files.
pub(super) fn spread_impls(files: &[File], modules: &BTreeSet<Vec<String>>) -> Vec<(String, Vec<String>)> {
    let by_module: BTreeMap<Vec<String>, &File> = files.iter().map(|f| (f.module.clone(), f)).collect();
    let mut owners: BTreeMap<(PathBuf, String), BTreeSet<PathBuf>> = BTreeMap::new();
    for file in files {
        let src = std::fs::read_to_string(&file.path).expect("a source file is readable");
        let tokens = without_tests(tokens(&src));
        let defined = defined_types(&tokens);
        let imported = imports(file, &src, modules);
        for name in inherent_impls(&tokens) {
            let owner = if defined.contains(&name) {
                Some(file.path.clone())
            } else {
                imported
                    .iter()
                    .filter(|p| p.last() == Some(&name))
                    .find_map(|p| (0..p.len()).rev().find_map(|n| by_module.get(&p[..n]).map(|f| f.path.clone())))
            };
            if let Some(owner) = owner {
                owners.entry((owner, name)).or_default().insert(file.path.clone());
            }
        }
    }
    owners
        .into_iter()
        .filter(|(_, at)| at.len() > 1)
        .map(|((owner, name), at)| {
            let at = at.iter().map(|p| p.display().to_string()).collect();
            (format!("{name} ({})", owner.display()), at)
        })
        .collect()
}

/// The types a file defines (`struct`, `enum`, `union`).
fn defined_types(tokens: &[Token]) -> BTreeSet<String> {
    tokens
        .windows(2)
        .filter_map(|w| match w {
            [Token::Ident(kw), Token::Ident(name)] if matches!(kw.as_str(), "struct" | "enum" | "union") => {
                Some(name.clone())
            }
            _ => None,
        })
        .collect()
}

/// The types of a file's inherent `impl` blocks (`impl<…> Type<…> {`, not `impl Trait for`).
fn inherent_impls(tokens: &[Token]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        // An item's `impl`, not a parameter's or a return type's `impl Trait`.
        let item = match i.checked_sub(1).map(|p| &tokens[p]) {
            None | Some(Token::Punct('}' | ';' | ']')) => true,
            Some(Token::Ident(kw)) => kw == "unsafe",
            Some(_) => false,
        };
        if *t != Token::Ident("impl".to_owned()) || !item {
            continue;
        }
        let mut j = i + 1;
        if tokens.get(j) == Some(&Token::Punct('<')) {
            let mut depth = 0;
            while let Some(t) = tokens.get(j) {
                match t {
                    Token::Punct('<') => depth += 1,
                    Token::Punct('>') => depth -= 1,
                    _ => {}
                }
                j += 1;
                if depth == 0 {
                    break;
                }
            }
        }
        let (mut name, mut depth) = (None, 0);
        while let Some(t) = tokens.get(j) {
            match t {
                Token::Punct('{') if depth == 0 => break,
                Token::Ident(kw) if depth == 0 && (kw == "for" || kw == "where") => {
                    if kw == "for" {
                        name = None;
                    }
                    break;
                }
                Token::Punct('<') => depth += 1,
                Token::Punct('>') => depth -= 1,
                Token::Ident(ident) if depth == 0 => name = Some(ident.clone()),
                _ => {}
            }
            j += 1;
        }
        out.extend(name);
    }
    out
}

#[test]
fn no_parameter_packs_more_than_two_values_and_no_type_spreads_its_impl_over_files() {
    let host = host_src();
    let root = host.join("../..");
    let mut packed = Vec::new();
    for dir in [host.clone(), root.join("tests/tests"), root.join("bench/src")] {
        let mut files = Vec::new();
        source_files(&dir, &mut files);
        for file in files {
            let src = std::fs::read_to_string(&file).expect("a readable source file");
            for name in packed_parameters(&without_tests(tokens(&src))) {
                packed.push(format!("{}: `{name}` takes a tuple of more than two values (name them)", file.display()));
            }
        }
    }
    assert!(packed.is_empty(), "{}", packed.join("\n"));
    let files = crate_files(&host);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let spread: Vec<String> =
        spread_impls(&files, &modules).into_iter().map(|(t, at)| format!("{t}: {}", at.join(", "))).collect();
    assert!(
        spread.is_empty(),
        "{} types with their inherent impl in several files:\n{}",
        spread.len(),
        spread.join("\n")
    );
}

#[test]
fn the_shapes_reader_sees_packed_tuples_and_inherent_impls() {
    let src = "fn a(x: (u8, u8)) {} fn b((p, q, r): (u8, &str, Vec<(u8, u8)>)) {} fn c(x: &(A, B, C)) {}";
    assert_eq!(packed_parameters(&tokens(src)), ["b", "c"]);
    let src =
        "impl A { fn new(m: impl Into<String>) -> B { B } } impl<T> C<T> where T: D {} impl E for F {}\n#[x] impl G {}";
    assert_eq!(inherent_impls(&tokens(src)), ["A", "C", "G"]);
}
