//! Sizes (issue 54): no file of `host/src`, the tests or the bench over 400 lines, and no
//! function in them over 80 — a function from its `fn` line to the line that closes it at
//! the same indentation (`rustfmt`'s layout).

use std::path::{Path, PathBuf};

/// The most lines a file may have.
pub(super) const FILE_LINES: usize = 400;
/// The most lines a function may have.
pub(super) const FUNCTION_LINES: usize = 80;

/// The functions of `src` longer than [`FUNCTION_LINES`]: (first line, name, lines).
pub(super) fn long_functions(src: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = src.lines().collect();
    let mut long = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = function_name(line) else { continue };
        let indent = &line[..line.len() - line.trim_start().len()];
        // Where its signature ends: a body opens, or it is a declaration or a one-liner.
        let Some(open) = (i..lines.len()).find(|&j| {
            let t = lines[j].trim_end();
            t.ends_with('{') || t.ends_with(';') || t.ends_with('}')
        }) else {
            continue;
        };
        if !lines[open].trim_end().ends_with('{') {
            continue;
        }
        let closing = format!("{indent}}}");
        if let Some(end) = (open + 1..lines.len()).find(|&j| lines[j].trim_end() == closing) {
            let length = end - i + 1;
            if length > FUNCTION_LINES {
                long.push((i + 1, name, length));
            }
        }
    }
    long
}

/// The name of the function a line opens (`pub(crate) async fn name(…`), if it opens one.
fn function_name(line: &str) -> Option<String> {
    let mut rest = line.trim_start();
    if rest.starts_with("pub") {
        rest = rest.strip_prefix("pub")?;
        if rest.starts_with('(') {
            rest = &rest[rest.find(')')? + 1..];
        }
        rest = rest.trim_start();
    }
    for qualifier in ["const ", "async ", "unsafe "] {
        rest = rest.strip_prefix(qualifier).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("fn ")?;
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some(rest[..end].to_owned())
}

/// Every oversized file and function under `dirs`, as a line each.
pub(super) fn oversized(dirs: &[PathBuf], source_files: impl Fn(&Path, &mut Vec<PathBuf>)) -> Vec<String> {
    let mut faults = Vec::new();
    for dir in dirs {
        let mut files = Vec::new();
        source_files(dir, &mut files);
        for file in files {
            let src = std::fs::read_to_string(&file).expect("a readable source file");
            let lines = src.lines().count();
            if lines > FILE_LINES {
                faults.push(format!("{}: {lines} lines (at most {FILE_LINES})", file.display()));
            }
            for (at, name, length) in long_functions(&src) {
                faults.push(format!("{}:{at}: `{name}` is {length} lines (at most {FUNCTION_LINES})", file.display()));
            }
        }
    }
    faults
}
