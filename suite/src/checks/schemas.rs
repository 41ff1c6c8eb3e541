//! JSON Schemas from `schemas/` (embedded, or `--schemas DIR`), each compiled once.

use std::collections::BTreeMap;
use std::path::Path;

use include_dir::{include_dir, Dir};
use serde_json::Value;

static EMBEDDED: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../schemas");

/// A schema file that is missing, not JSON or not a valid schema.
#[derive(Debug, thiserror::Error)]
#[error("schema `{id}`: {message}")]
pub struct SchemaError {
    /// The schema id (its path without `.json`).
    pub id: String,
    /// What is wrong.
    pub message: String,
}

/// Compiled validators by id.
pub struct Schemas {
    validators: BTreeMap<String, jsonschema::Validator>,
}

impl std::fmt::Debug for Schemas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.validators.keys()).finish()
    }
}

/// The schemas the checks need; loading fails if one is missing.
pub const REQUIRED: &[&str] = &[
    "envelope/single",
    "envelope/list",
    "tfe/error",
    "tfe/pagination",
];

impl Schemas {
    /// The schemas built into the binary.
    pub fn embedded() -> Result<Self, SchemaError> {
        let mut files = Vec::new();
        collect(&EMBEDDED, &mut files);
        Self::from_files(files)
    }

    /// Every file of the embedded `schemas/` with its path, as built into the binary (what
    /// `conform certify` hashes).
    pub fn embedded_files() -> Vec<(String, &'static [u8])> {
        crate::catalog::every_file(&EMBEDDED)
    }

    /// Schemas read from a folder laid out like `schemas/` (every `.json` under it).
    pub fn from_dir(dir: &Path) -> Result<Self, SchemaError> {
        let mut files = Vec::new();
        collect_folder(dir, dir, &mut files)?;
        Self::from_files(files)
    }

    /// Whether a schema `id` was loaded.
    pub fn has(&self, id: &str) -> bool {
        self.validators.contains_key(id)
    }

    /// The schema documents themselves, by id: the embedded ones, or those of a folder laid
    /// out like `schemas/` (every `.json` under it). `conform openapi` puts them in its
    /// components.
    pub fn documents(dir: Option<&Path>) -> Result<Vec<(String, Value)>, SchemaError> {
        let mut files = Vec::new();
        match dir {
            None => collect(&EMBEDDED, &mut files),
            Some(dir) => collect_folder(dir, dir, &mut files)?,
        }
        files.sort();
        files
            .into_iter()
            .map(|(id, text)| {
                serde_json::from_str(&text)
                    .map(|value| (id.clone(), value))
                    .map_err(|e| SchemaError {
                        id,
                        message: format!("not JSON: {e}"),
                    })
            })
            .collect()
    }

    fn from_files(files: Vec<(String, String)>) -> Result<Self, SchemaError> {
        let mut validators = BTreeMap::new();
        for (id, text) in files {
            let value: Value = serde_json::from_str(&text).map_err(|e| SchemaError {
                id: id.clone(),
                message: format!("not JSON: {e}"),
            })?;
            let validator = jsonschema::validator_for(&value).map_err(|e| SchemaError {
                id: id.clone(),
                message: e.to_string(),
            })?;
            validators.insert(id, validator);
        }
        for id in REQUIRED {
            if !validators.contains_key(*id) {
                return Err(SchemaError {
                    id: id.to_string(),
                    message: "missing".into(),
                });
            }
        }
        Ok(Self { validators })
    }

    /// Validates `instance` against schema `id`: `Err` lists the first violations.
    pub fn validate(&self, id: &str, instance: &Value) -> Result<(), String> {
        let validator = self
            .validators
            .get(id)
            .ok_or_else(|| format!("no schema `{id}`"))?;
        let errors: Vec<String> = validator
            .iter_errors(instance)
            .take(3)
            .map(|e| {
                let at = e.instance_path().to_string();
                let at = if at.is_empty() {
                    "the document".to_string()
                } else {
                    format!("`{at}`")
                };
                format!("{at}: {e}")
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }
}

fn collect(dir: &Dir<'_>, out: &mut Vec<(String, String)>) {
    for file in dir.files() {
        let path = file.path().to_string_lossy().replace('\\', "/");
        if let (Some(id), Some(text)) = (path.strip_suffix(".json"), file.contents_utf8()) {
            out.push((id.to_string(), text.to_string()));
        }
    }
    for sub in dir.dirs() {
        collect(sub, out);
    }
}

fn collect_folder(
    root: &Path,
    dir: &Path,
    out: &mut Vec<(String, String)>,
) -> Result<(), SchemaError> {
    let fail = |e: std::io::Error| SchemaError {
        id: dir.display().to_string(),
        message: e.to_string(),
    };
    for entry in std::fs::read_dir(dir).map_err(fail)? {
        let path = entry.map_err(fail)?.path();
        if path.is_dir() {
            collect_folder(root, &path, out)?;
            continue;
        }
        let rel = path.strip_prefix(root).unwrap_or(&path);
        let rel = rel.to_string_lossy().replace('\\', "/");
        if let Some(id) = rel.strip_suffix(".json") {
            let text = std::fs::read_to_string(&path).map_err(fail)?;
            out.push((id.to_string(), text));
        }
    }
    Ok(())
}
