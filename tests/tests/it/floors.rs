//! The floors of `host/src` (README, "Architecture"): every import runs down. Each file's
//! imports — `use` trees and paths that start with `crate::`, `super::`, `self::` or a child
//! module's name — are read from its source and resolved to the file that defines what they
//! name. An import from one room (a top-level module: a folder or a file) may only go to a
//! room on a lower floor of [`FLOORS`]; inside a folder, files may import each other only
//! where no circle forms; the surfaces (`api`, `settings`) never name the store nor the
//! process's shared parts (`shared`): they speak to the domain's handles; no room but the store
//! names a delivery row's fields; and no room but the wiring (`service`) names `App`, the
//! process's parts all together, and none but the wiring ([`STORE_HOLDERS`]) holds the whole
//! store. Test modules (`#[cfg(test)]`)
//! are not part of the house.
//!
//! Sizes too (`floors/sizes.rs`): no file over 400 lines, no function over 80, in `host/src`,
//! the tests and the bench.
//!
//! Plain `std` only, so it can also run on its own:
//! `rustc --edition 2024 --test tests/tests/it/floors.rs -o target/floors && target/floors`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The rooms of `host/src` from the top floor down. `lib` is the crate map (`lib.rs`).
const FLOORS: &[&[&str]] = &[
    &["lib"],
    &["cli"],
    &["service"],
    &["api", "settings"],
    &["exports", "delivery", "server"],
    &["domain"],
    &["shared"],
    &["history", "destinations", "sources"],
    &["vault", "jobs"],
    &["config", "metrics", "auth"],
    &["plugins"],
    &["store"],
    &["certs", "filters", "telemetry", "plans"],
    &["offload"],
    &[
        "sign",
        "web",
        "tls",
        "ids",
        "time",
        "catalog",
        "netguard",
        "trace",
        "slots",
        "forwarded",
        "recent",
        "panics",
        "kinds",
        "meters",
    ],
];

/// The HTTP surfaces: they translate requests and answers and speak to the domain only.
const SURFACES: &[&str] = &["api", "settings"];
/// Rooms below the domain that the surfaces never name: what they keep is the domain's to
/// reach (the store, and the state the domain's handles hold).
const DOMAIN_ONLY: &[&str] = &["store", "shared", "history"];
/// A delivery row's field names are the store's: everyone else reads and writes a row as a
/// type (`DeliveryRow`, `RowChanges`, `Listed`).
const ROW_FIELDS: (&str, &str) = ("store/queue/row.rs", "field");
/// The process's parts are known all together in one room only (the wiring): everyone else
/// is handed the parts it uses.
const WIRING: (&str, &str) = ("service", "App");
/// The whole store (`store::Store`) is the wiring's: the process's (`service`), `weir
/// admin`'s (`cli`) and the delivery engine's start, which opens a connection of its own.
/// Every other part is handed the store's concerns it uses.
const STORE_HOLDERS: &[&str] = &["service", "cli", "delivery/mod.rs", "delivery/parts.rs"];

/// One source file of the crate.
#[derive(Debug)]
struct File {
    path: PathBuf,
    /// Its module path (`["store", "queue"]`; `[]` for `lib.rs`).
    module: Vec<String>,
}

impl File {
    fn room(&self) -> &str {
        self.module.first().map_or("lib", String::as_str)
    }

    fn name(&self, root: &Path) -> String {
        self.path.strip_prefix(root).unwrap_or(&self.path).display().to_string()
    }
}

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).expect("host/src is readable").map(|e| e.expect("an entry").path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            source_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_of(root: &Path, path: &Path) -> Vec<String> {
    let rel = path.strip_prefix(root).expect("under the root").with_extension("");
    let mut module: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
        module.pop();
    }
    module
}

#[path = "floors/reader.rs"]
mod reader;
#[path = "floors/shapes.rs"]
mod shapes;
#[path = "floors/sizes.rs"]
mod sizes;
use reader::{Token, imports, tokens, without_tests};

/// The file that defines what an absolute path names: the longest module prefix.
fn resolve<'a>(path: &[String], by_module: &BTreeMap<Vec<String>, &'a File>) -> Option<&'a File> {
    (0..=path.len()).rev().find_map(|n| by_module.get(&path[..n]).copied())
}

/// Every import between files of the crate: (from, to) → the names taken.
fn arrows(root: &Path, files: &[File]) -> BTreeMap<(usize, usize), BTreeSet<String>> {
    let by_module: BTreeMap<Vec<String>, &File> = files.iter().map(|f| (f.module.clone(), f)).collect();
    let index: BTreeMap<&Path, usize> = files.iter().enumerate().map(|(i, f)| (f.path.as_path(), i)).collect();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let mut out: BTreeMap<(usize, usize), BTreeSet<String>> = BTreeMap::new();
    for (from, file) in files.iter().enumerate() {
        let src = std::fs::read_to_string(&file.path).expect("a source file is readable");
        for path in imports(file, &src, &modules) {
            let Some(target) = resolve(&path, &by_module) else { continue };
            let to = index[target.path.as_path()];
            if to != from {
                let name = path.last().cloned().unwrap_or_else(|| target.name(root));
                out.entry((from, to)).or_default().insert(name);
            }
        }
    }
    out
}

fn floor_of(room: &str) -> Option<usize> {
    FLOORS.iter().position(|floor| floor.contains(&room))
}

/// The files of one room that import each other in a loop (each circle once).
fn circles(members: &[usize], arrows: &BTreeMap<(usize, usize), BTreeSet<String>>) -> Vec<Vec<usize>> {
    // Tarjan's strongly connected components over the room's own arrows.
    struct Walk<'a> {
        next: &'a BTreeMap<usize, Vec<usize>>,
        index: BTreeMap<usize, usize>,
        low: BTreeMap<usize, usize>,
        stack: Vec<usize>,
        counter: usize,
        found: Vec<Vec<usize>>,
    }
    impl Walk<'_> {
        fn visit(&mut self, v: usize) {
            self.index.insert(v, self.counter);
            self.low.insert(v, self.counter);
            self.counter += 1;
            self.stack.push(v);
            for &w in self.next.get(&v).map(Vec::as_slice).unwrap_or_default() {
                if !self.index.contains_key(&w) {
                    self.visit(w);
                    let lw = self.low[&w];
                    let lv = self.low.get_mut(&v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if self.stack.contains(&w) {
                    let iw = self.index[&w];
                    let lv = self.low.get_mut(&v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[&v] == self.index[&v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut next: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for &(a, b) in arrows.keys() {
        if members.contains(&a) && members.contains(&b) {
            next.entry(a).or_default().push(b);
        }
    }
    let mut walk = Walk {
        next: &next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        counter: 0,
        found: Vec::new(),
    };
    for &m in members {
        if !walk.index.contains_key(&m) {
            walk.visit(m);
        }
    }
    walk.found
}

/// What breaks the floors, in words (empty when nothing does).
/// The crate's files as modules (`main.rs`, the binary, and `tests.rs` test modules left out).
fn crate_files(root: &Path) -> Vec<File> {
    let mut paths = Vec::new();
    source_files(root, &mut paths);
    paths
        .into_iter()
        // `main.rs` is the binary (it uses the library from outside); `tests.rs` files are
        // test modules.
        .filter(|p| p.file_name().is_some_and(|n| n != "main.rs" && n != "tests.rs"))
        .map(|path| File { module: module_of(root, &path), path })
        .collect()
}

fn faults(root: &Path) -> Vec<String> {
    let files = crate_files(root);
    let arrows = arrows(root, &files);
    let mut faults = wiring_faults(root, &files);
    for file in &files {
        if floor_of(file.room()).is_none() {
            faults.push(format!("{}: its room `{}` stands on no floor of FLOORS", file.name(root), file.room()));
        }
    }
    for ((a, b), names) in &arrows {
        let (from, to) = (&files[*a], &files[*b]);
        if from.room() == to.room() {
            continue;
        }
        if SURFACES.contains(&from.room()) && DOMAIN_ONLY.contains(&to.room()) {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            faults.push(format!(
                "{} -> {}: a surface reaches past the domain (surfaces speak to `domain` only): {}",
                from.name(root),
                to.name(root),
                names.join(", ")
            ));
        }
        let holder = STORE_HOLDERS.iter().any(|h| from.room() == *h || from.name(root) == *h);
        if to.name(root) == "store/mod.rs" && names.contains("Store") && !holder {
            faults.push(format!(
                "{} -> {}: holds the whole store (take the store's concerns you use)",
                from.name(root),
                to.name(root)
            ));
        }
        if to.name(root) == ROW_FIELDS.0 && from.room() != "store" && names.contains(ROW_FIELDS.1) {
            faults.push(format!(
                "{} -> {}: a delivery row's raw field names outside the store (read and write the row as a type)",
                from.name(root),
                to.name(root)
            ));
        }
        let (Some(fa), Some(fb)) = (floor_of(from.room()), floor_of(to.room())) else { continue };
        if fa >= fb {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            faults.push(format!(
                "{} -> {}: an import that does not run down ({} is on floor {}, {} on floor {}): {}",
                from.name(root),
                to.name(root),
                from.room(),
                fa + 1,
                to.room(),
                fb + 1,
                names.join(", ")
            ));
        }
    }
    let rooms: BTreeSet<&str> = files.iter().map(File::room).collect();
    for room in rooms {
        let members: Vec<usize> = (0..files.len()).filter(|&i| files[i].room() == room).collect();
        for circle in circles(&members, &arrows) {
            let mut text = format!("a circle of {} files in {room}:", circle.len());
            for ((a, b), names) in &arrows {
                if circle.contains(a) && circle.contains(b) {
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    text.push_str(&format!(
                        "\n    {} -> {}: {}",
                        files[*a].name(root),
                        files[*b].name(root),
                        names.join(", ")
                    ));
                }
            }
            faults.push(text);
        }
    }
    faults
}

/// Files outside the wiring that name the process's parts all together.
fn wiring_faults(root: &Path, files: &[File]) -> Vec<String> {
    let mut faults = Vec::new();
    for file in files.iter().filter(|f| f.room() != WIRING.0) {
        let src = std::fs::read_to_string(&file.path).expect("a source file is readable");
        if without_tests(tokens(&src)).iter().any(|t| matches!(t, Token::Ident(name) if name == WIRING.1)) {
            faults.push(format!(
                "{}: names `{}` outside `{}` (take the parts you use instead)",
                file.name(root),
                WIRING.1,
                WIRING.0
            ));
        }
    }
    faults
}

#[test]
fn no_file_over_400_lines_and_no_function_over_80() {
    let host = host_src();
    let root = host.join("../..");
    let dirs = [host, root.join("tests/tests"), root.join("bench/src")];
    let faults = sizes::oversized(&dirs, source_files);
    assert!(faults.is_empty(), "{} too long:\n{}", faults.len(), faults.join("\n"));
}

#[test]
fn a_function_is_measured_from_its_fn_line_to_its_closing_brace() {
    let body = "        x();\n".repeat(79);
    let src = format!(
        "pub(crate) async fn long(\n    a: u8,\n) {{\n{body}}}\nfn short() {{}}\ntrait T {{\n    fn declared(&self);\n}}\n"
    );
    assert_eq!(sizes::long_functions(&src), vec![(1, "long".to_owned(), 83)]);
    assert_eq!(sizes::long_functions(&src.replacen("    a: u8,\n", "", 1)), vec![(1, "long".to_owned(), 82)]);
}

fn host_src() -> PathBuf {
    // Under cargo, from the tests crate; on its own, from the workspace root.
    let here = PathBuf::from(option_env!("CARGO_MANIFEST_DIR").unwrap_or("."));
    [here.join("../host/src"), here.join("host/src")].into_iter().find(|p| p.is_dir()).expect("host/src is found")
}

#[test]
fn every_import_runs_down_and_no_files_import_each_other_in_a_circle() {
    let faults = faults(&host_src());
    assert!(faults.is_empty(), "{} faults of the floors:\n{}", faults.len(), faults.join("\n"));
}

#[test]
fn the_reader_sees_imports_through_use_trees_paths_and_child_modules() {
    let modules: BTreeSet<Vec<String>> =
        [vec![], vec!["a".to_owned()], vec!["a".to_owned(), "b".to_owned()]].into_iter().collect();
    let file = File { path: PathBuf::from("a/mod.rs"), module: vec!["a".to_owned()] };
    let src = r#"
        //! `crate::ignored::in_a_comment`
        use crate::x::{self, y::{Z, W as V}};
        use super::q;
        use b::Thing;
        fn f() { let s = "crate::not::a_path"; crate::p::f(); b::g(); 'l: loop { break 'l; } }
        pub(in crate::not_an_import) fn g() {}
        mod inner { use super::super::r; }
        #[cfg(test)]
        mod tests { use crate::test_only; }
    "#;
    let found: Vec<String> = imports(&file, src, &modules).iter().map(|p| p.join("::")).collect();
    assert_eq!(found, ["x", "x::y::Z", "x::y::W", "q", "a::b::Thing", "p::f", "a::b::g", "r"]);
}
