//! The reference's layers, kept: every file of `reference/src` imports only from its own layer
//! or one below it ([`LAYERS`], lowest first), a route group's files never from another group
//! (nor from `routes/mod.rs`, which merges the groups' routers), and no files import each other
//! in a circle. The imports are read from the source: `use` trees and `crate::`/`super::`/child
//! module paths written inline, outside comments and literals (an inline test module's
//! `use super::*` is its own file's).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The layers, lowest first, each with the top-level modules it holds (`""`: `lib.rs`).
const LAYERS: &[(&str, &[&str])] = &[
    (
        "store",
        &[
            "error", "paths", "compat", "faults", "shapes", "store", "state",
        ],
    ),
    ("render", &["jsonapi", "render"]),
    ("shared", &["shared"]),
    ("routes", &["routes"]),
    ("gate", &["gate"]),
    ("app", &["app", "config", "tls", ""]),
];

/// A module's path in the crate (`[]`: the crate root).
type Module = Vec<String>;

/// One import a file makes: the module it reaches and the path as written.
#[derive(Debug, Clone)]
struct Import {
    to: Module,
    written: String,
}

#[test]
fn every_file_imports_only_from_its_layer_or_below() {
    let files = read_sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let imports = imports_of(&files);
    let found: usize = imports.values().map(Vec::len).sum();
    assert!(
        found > 100,
        "only {found} imports read in reference/src: the reading is broken"
    );
    let mut wrong = Vec::new();
    for (from, list) in &imports {
        for import in list {
            wrong.extend(breach(&files, from, import));
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the reference's layers ({}):\n{}",
        layer_names(),
        wrong.join("\n")
    );
    if let Some(circle) = circle(&imports) {
        let steps: Vec<String> = circle
            .iter()
            .map(|(from, import)| {
                let (from, to) = (file_name(&files, from), file_name(&files, &import.to));
                format!("  {from} imports {} from {to}", import.written)
            })
            .collect();
        panic!("an import circle in reference/src:\n{}", steps.join("\n"));
    }
}

#[test]
fn the_reading_sees_grouped_inline_and_child_imports() {
    let text = r#"
        mod child;
        // use crate::gate::Commented;
        use crate::{store::Store, jsonapi::{ok, Body as B}};
        use super::sibling;
        fn f() { let s = "crate::paths::InString"; crate::faults::Kind::X; child::go(); }
        #[cfg(test)] mod tests { use super::*; }
    "#;
    let module: Module = vec!["routes".into(), "runs".into()];
    let mut known = BTreeMap::new();
    for m in [
        vec![],
        vec!["store"],
        vec!["jsonapi"],
        vec!["faults"],
        vec!["paths"],
        vec!["gate"],
        vec!["routes"],
        vec!["routes", "sibling"],
        vec!["routes", "runs"],
        vec!["routes", "runs", "child"],
    ] {
        let m: Module = m.into_iter().map(String::from).collect();
        known.insert(m.clone(), PathBuf::from(m.join("/")));
    }
    let mut reached: Vec<String> = imports_in(&known, &module, text)
        .into_iter()
        .map(|i| i.to.join("/"))
        .collect();
    reached.sort();
    reached.dedup();
    assert_eq!(
        reached,
        [
            "faults",
            "jsonapi",
            "routes/runs/child",
            "routes/sibling",
            "store"
        ]
    );
}

/// Every `.rs` file under `src`, by module.
fn read_sources(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut files = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.insert(module_of(src, &path), path);
            }
        }
    }
    files
}

/// `gate/include.rs` → `gate::include`, `gate/mod.rs` → `gate`, `lib.rs` → the root.
fn module_of(src: &Path, path: &Path) -> Module {
    let relative = path.strip_prefix(src).unwrap_or(path).with_extension("");
    let mut module: Module = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
        module.pop();
    }
    module
}

/// What each file imports.
fn imports_of(files: &BTreeMap<Module, PathBuf>) -> BTreeMap<Module, Vec<Import>> {
    files
        .iter()
        .map(|(module, path)| {
            let text =
                std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (module.clone(), imports_in(files, module, &text))
        })
        .collect()
}

/// The imports of the file of `module` whose text is `text`: each path that starts at
/// `crate`, `super`, `self` or a child module, resolved to the deepest module it names.
fn imports_in(files: &BTreeMap<Module, PathBuf>, module: &Module, text: &str) -> Vec<Import> {
    let code = code_only(text);
    let children = child_modules(&code);
    let mut paths = Vec::new();
    let mut rest = String::new();
    let mut tail = code.as_str();
    while let Some(at) = find_word(tail, "use") {
        rest.push_str(&tail[..at]);
        let end = tail[at..].find(';').map_or(tail.len(), |e| at + e);
        let tree = &tail[at + 3..end];
        if tree.trim() != "super::*" {
            paths.extend(expand(&[], tree));
        }
        tail = &tail[end..];
    }
    rest.push_str(tail);
    paths.extend(inline_paths(&rest, &children));
    let mut imports = Vec::new();
    for segments in paths {
        let Some(to) = resolve(files, module, &children, &segments) else {
            continue;
        };
        if &to != module {
            imports.push(Import {
                to,
                written: segments.join("::"),
            });
        }
    }
    imports
}

/// The text with comments, string literals and character literals blanked out.
fn code_only(text: &str) -> String {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let next = chars.get(i + 1).copied();
        match chars[i] {
            '/' if next == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                i += 2;
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            'r' if (next == Some('#') || next == Some('"')) && !out.ends_with(is_ident) => {
                let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
                if chars.get(i + 1 + hashes) != Some(&'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                i += 2 + hashes;
                let close: String = std::iter::once('"')
                    .chain("#".repeat(hashes).chars())
                    .collect();
                while i < chars.len() && !chars[i..].iter().collect::<String>().starts_with(&close)
                {
                    i += 1;
                }
                i += close.chars().count();
                out.push_str("\"\"");
            }
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
            }
            '\'' if next == Some('\\') => {
                i += 3;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            }
            '\'' if chars.get(i + 2) == Some(&'\'') => i += 3,
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// The modules a file declares with `mod name;`.
fn child_modules(code: &str) -> Vec<String> {
    let mut children = Vec::new();
    let mut tail = code;
    while let Some(at) = find_word(tail, "mod") {
        let after = &tail[at + 3..];
        let name: String = after
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let declared = after.trim_start()[name.len()..]
            .trim_start()
            .starts_with(';');
        if declared && !name.is_empty() {
            children.push(name);
        }
        tail = after;
    }
    children
}

/// Where `word` stands alone in `text` (not inside another identifier).
fn find_word(text: &str, word: &str) -> Option<usize> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(found) = text[from..].find(word) {
        let at = from + found;
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        if !before.is_some_and(is_ident) && !after.is_some_and(is_ident) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// The paths of a `use` tree (`a::{b, c::{d as e}}` → `a::b`, `a::c::d`), each under `prefix`.
fn expand(prefix: &[String], tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or_default();
        let mut segments = prefix.to_vec();
        segments.extend(
            path.split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from),
        );
        return vec![segments];
    };
    let mut head = prefix.to_vec();
    head.extend(
        tree[..open]
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from),
    );
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut depth, mut start, mut paths) = (0, 0, Vec::new());
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                paths.extend(expand(&head, &inner[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    if !inner[start..].trim().is_empty() {
        paths.extend(expand(&head, &inner[start..]));
    }
    paths
}

/// The paths written outside `use` that start at `crate`, `super` or a child module.
fn inline_paths(code: &str, children: &[String]) -> Vec<Vec<String>> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut paths = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let c = code[i..].chars().next().unwrap_or(' ');
        let starts = is_ident(c) && !code[..i].chars().next_back().is_some_and(is_ident);
        if !starts {
            i += c.len_utf8();
            continue;
        }
        let len = code[i..]
            .find(|c: char| !(is_ident(c) || c == ':'))
            .unwrap_or(code.len() - i);
        let path: Vec<String> = code[i..i + len]
            .split("::")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        let first = path.first().map(String::as_str).unwrap_or_default();
        let rooted = matches!(first, "crate" | "super") || children.iter().any(|c| c == first);
        if path.len() > 1 && rooted {
            paths.push(path);
        }
        i += len.max(1);
    }
    paths
}

/// The deepest module of `files` a path written in the file of `module` names, or `None` for
/// a path outside the crate.
fn resolve(
    files: &BTreeMap<Module, PathBuf>,
    module: &Module,
    children: &[String],
    segments: &[String],
) -> Option<Module> {
    let first = segments.first()?.as_str();
    let mut at: Module = match first {
        "crate" => Vec::new(),
        "self" => module.clone(),
        "super" => module[..module.len().saturating_sub(1)].to_vec(),
        child if children.iter().any(|c| c == child) => module.clone(),
        _ => return None,
    };
    let mut rest = if matches!(first, "crate" | "self" | "super") {
        &segments[1..]
    } else {
        segments
    };
    while rest.first().is_some_and(|s| s == "super") {
        at.pop();
        rest = &rest[1..];
    }
    for segment in rest {
        let mut deeper = at.clone();
        deeper.push(segment.clone());
        if !files.contains_key(&deeper) {
            break;
        }
        at = deeper;
    }
    Some(at)
}

/// The layer a module is in, as its index in [`LAYERS`].
fn layer_of(module: &Module) -> Option<usize> {
    let top = module.first().map(String::as_str).unwrap_or("");
    LAYERS.iter().position(|(_, tops)| tops.contains(&top))
}

/// The route group a module is in (`routes::workspaces::vars` → `workspaces`); `None` outside
/// the routes or for `routes/mod.rs`.
fn group_of(module: &Module) -> Option<&str> {
    (module.first()? == "routes").then(|| module.get(1).map(String::as_str))?
}

/// What is wrong with one import, said with the files and the path as written.
fn breach(files: &BTreeMap<Module, PathBuf>, from: &Module, import: &Import) -> Option<String> {
    let name = |m: &Module| file_name(files, m);
    let (Some(here), Some(there)) = (layer_of(from), layer_of(&import.to)) else {
        let lost = if layer_of(from).is_none() {
            from
        } else {
            &import.to
        };
        return Some(format!(
            "{} is in no layer: put its top-level module in one of LAYERS in reference/tests/layers.rs",
            name(lost)
        ));
    };
    if there > here {
        return Some(format!(
            "{} (layer {}) imports {} from {} (layer {}, above it)",
            name(from),
            LAYERS[here].0,
            import.written,
            name(&import.to),
            LAYERS[there].0
        ));
    }
    let (Some(own), other) = (group_of(from), group_of(&import.to)) else {
        return None;
    };
    let another = import.to.first().is_some_and(|t| t == "routes") && other != Some(own);
    another.then(|| {
        format!(
            "{} (route group {own}) imports {} from {}: a route module never imports another \
             route module (move what they share down to render or shared)",
            name(from),
            import.written,
            name(&import.to)
        )
    })
}

/// The file of a module, as `reference/src/...`.
fn file_name(files: &BTreeMap<Module, PathBuf>, module: &Module) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    files.get(module).map_or_else(
        || format!("{module:?}"),
        |path| {
            format!(
                "reference/src/{}",
                path.strip_prefix(&src).unwrap_or(path).display()
            )
        },
    )
}

/// One circle of imports between files, each step a file and the import it makes, if any.
fn circle(imports: &BTreeMap<Module, Vec<Import>>) -> Option<Vec<(Module, Import)>> {
    // Depth first; a module met again on the current path closes a circle.
    fn visit(
        at: &Module,
        imports: &BTreeMap<Module, Vec<Import>>,
        done: &mut Vec<Module>,
        path: &mut Vec<(Module, Import)>,
    ) -> Option<Vec<(Module, Import)>> {
        if let Some(start) = path.iter().position(|(m, _)| m == at) {
            return Some(path[start..].to_vec());
        }
        if done.contains(at) {
            return None;
        }
        for import in imports.get(at).into_iter().flatten() {
            path.push((at.clone(), import.clone()));
            let found = visit(&import.to, imports, done, path);
            path.pop();
            if found.is_some() {
                return found;
            }
        }
        done.push(at.clone());
        None
    }
    let mut done = Vec::new();
    imports
        .keys()
        .find_map(|m| visit(m, imports, &mut done, &mut Vec::new()))
}

/// The layers, lowest first, for the failure message.
fn layer_names() -> String {
    LAYERS
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(" < ")
}
