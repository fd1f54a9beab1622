//! Sizes: no file of `host/src`, the tests or the bench over 400 lines, and no
//! function in them over 80 — a function from its `fn` line to the line that closes it at
//! the same indentation (`rustfmt`'s layout).

use std::path::{Path, PathBuf};

use super::host_src;

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

/// The functions of a Lua, Python or shell script longer than [`FUNCTION_LINES`]: a Python
/// `def` to the next line as little indented; a Lua `function` to its `end`, a shell
/// `name() {` to its `}`, at the same indentation.
pub(super) fn long_script_functions(src: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = src.lines().collect();
    let indent_of = |l: &str| l.len() - l.trim_start().len();
    let mut long = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let (name, end) = if let Some(rest) = t.strip_prefix("def ").or_else(|| t.strip_prefix("async def ")) {
            let name = rest.split('(').next().unwrap_or("").to_owned();
            let end = (i + 1..lines.len())
                .find(|&j| !lines[j].trim().is_empty() && indent_of(lines[j]) <= indent_of(line))
                .unwrap_or(lines.len());
            (name, end)
        } else if let Some(rest) = t.strip_prefix("local function ").or_else(|| t.strip_prefix("function ")) {
            let closing = format!("{}end", &line[..indent_of(line)]);
            let end = (i + 1..lines.len()).find(|&j| lines[j].trim_end() == closing).map_or(lines.len(), |j| j + 1);
            (rest.split('(').next().unwrap_or("").to_owned(), end)
        } else if let Some(name) = t.strip_suffix("() {").filter(|n| n.chars().all(|c| c.is_alphanumeric() || c == '_'))
        {
            let closing = format!("{}}}", &line[..indent_of(line)]);
            let end = (i + 1..lines.len()).find(|&j| lines[j].trim_end() == closing).map_or(lines.len(), |j| j + 1);
            (name.to_owned(), end)
        } else {
            continue;
        };
        if end - i > FUNCTION_LINES {
            long.push((i + 1, name, end - i));
        }
    }
    long
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

#[test]
fn no_script_over_400_lines_and_no_function_over_80() {
    let root = host_src().join("../..");
    let mut faults = Vec::new();
    for dir in ["host/src/store/lua", "tests", "bench", "scripts", "examples", "plugins", ".ci"] {
        let mut files = Vec::new();
        script_files(&root.join(dir), &mut files);
        for file in files {
            let src = std::fs::read_to_string(&file).expect("a readable script");
            let lines = src.lines().count();
            if lines > FILE_LINES {
                faults.push(format!("{}: {lines} lines (at most {})", file.display(), FILE_LINES));
            }
            for (at, name, length) in long_script_functions(&src) {
                faults.push(format!(
                    "{}:{at}: `{name}` is {length} lines (at most {})",
                    file.display(),
                    FUNCTION_LINES
                ));
            }
        }
    }
    assert!(faults.is_empty(), "{} too long:\n{}", faults.len(), faults.join("\n"));
}

/// The project's scripts under `dir`: Lua, Python and shell (not what a build put there).
fn script_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.map(|e| e.expect("an entry").path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | "node_modules" | "dist" | "__pycache__" | ".venv") {
                script_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "lua" || e == "py" || e == "sh") {
            out.push(path);
        }
    }
}
