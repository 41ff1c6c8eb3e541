//! The registry read protocol ("Registry modules, read endpoints"): pure judgments on its
//! answers. Nothing here sends a request; `crate::runner`'s registry part sends them and records the
//! results.
//!
//! The spec names no member of a registry answer. The core judgments read only what the spec's
//! words give: the values of the path (the namespace, name, provider and version a request
//! names, which the spec's "Identifiers used in paths" table calls exactly that), found as JSON
//! strings, and, where an answer has objects, the members named like those identifiers. The
//! exact TFE shapes (`modules`, `meta.limit`, `id` = `ns/name/provider/version`) are judged
//! only by the `tfe.*` checks (tfe-api-facts 3.3).

use serde_json::{Map, Value};

use super::status_text;
use crate::target::Exchange;

/// A module version of the registry, as the run knows it: the one it published, or the one
/// `--module` gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleRef {
    /// The namespace (the organization, for a private module).
    pub namespace: String,
    /// The module name.
    pub name: String,
    /// The provider.
    pub provider: String,
    /// The version.
    pub version: String,
}

impl ModuleRef {
    /// `namespace/name/provider`, the module's source address in the registry.
    pub fn source(&self) -> String {
        format!("{}/{}/{}", self.namespace, self.name, self.provider)
    }
}

impl std::fmt::Display for ModuleRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.source(), self.version)
    }
}

/// Every object of `doc` (at any depth, `doc` itself included), depth first.
fn objects(doc: &Value) -> Vec<&Map<String, Value>> {
    let mut out = Vec::new();
    let mut stack = vec![doc];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                out.push(map);
                stack.extend(map.values().rev());
            }
            Value::Array(items) => stack.extend(items.iter().rev()),
            _ => {}
        }
    }
    out
}

/// Every string value of `doc`, at any depth.
fn strings(doc: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack = vec![doc];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => out.push(s.as_str()),
            Value::Object(map) => stack.extend(map.values()),
            Value::Array(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    out
}

/// True when some string of `doc` is exactly `text`.
fn has_string(doc: &Value, text: &str) -> bool {
    strings(doc).contains(&text)
}

/// The objects of `doc` whose `name` is the module's name (the spec's identifier `name`).
fn named<'a>(doc: &'a Value, name: &str) -> Vec<&'a Map<String, Value>> {
    objects(doc)
        .into_iter()
        .filter(|o| o.get("name").and_then(Value::as_str) == Some(name))
        .collect()
}

fn member<'a>(o: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    o.get(name).and_then(Value::as_str)
}

/// Whether an answer holds the module: an object named like it whose `namespace` (when it
/// has one) is the module's; or, in an answer without such objects, a string that is the
/// module's name or has it as a `/`-separated segment (`ns/name/provider`).
pub fn registry_holds_module(doc: &Value, m: &ModuleRef) -> bool {
    let named = named(doc, &m.name);
    if !named.is_empty() {
        return named
            .iter()
            .any(|o| member(o, "namespace").is_none_or(|ns| ns == m.namespace));
    }
    strings(doc)
        .iter()
        .any(|s| *s == m.name || s.split('/').any(|seg| seg == m.name))
}

/// `registry.read`: the answer is about the module.
pub fn registry_read(doc: &Value, m: &ModuleRef, pages: usize) -> Result<(), String> {
    if registry_holds_module(doc, m) {
        return Ok(());
    }
    let read = if pages > 1 {
        format!(" ({pages} pages read with `offset`)")
    } else {
        String::new()
    };
    Err(format!(
        "expected the answer to be about the module `{}`{read}; it names no module `{}` in namespace `{}`",
        m.source(),
        m.name,
        m.namespace
    ))
}

/// `registry.versions`: the versions of the module list its version.
pub fn registry_versions_listed(doc: &Value, m: &ModuleRef) -> Result<(), String> {
    if has_string(doc, &m.version) {
        return Ok(());
    }
    let listed: Vec<&str> = objects(doc)
        .into_iter()
        .filter_map(|o| member(o, "version"))
        .filter(|v| !v.is_empty())
        .collect();
    Err(format!(
        "expected the versions of `{}` to list its published version `{}`; {}",
        m.source(),
        m.version,
        if listed.is_empty() {
            "the answer lists no version".to_string()
        } else {
            format!("it lists {}", listed.join(", "))
        }
    ))
}

/// `registry.version`: the answer is that version of that module.
pub fn registry_version_answered(doc: &Value, m: &ModuleRef) -> Result<(), String> {
    if !registry_holds_module(doc, m) {
        return Err(format!(
            "expected the version `{}` of `{}`; the answer names no module `{}`",
            m.version,
            m.source(),
            m.name
        ));
    }
    let stated: Vec<&str> = named(doc, &m.name)
        .into_iter()
        .filter_map(|o| member(o, "version"))
        .collect();
    if let Some(other) = stated.iter().find(|v| **v != m.version) {
        return Err(format!(
            "expected the version `{}` of `{}`; the answer states version `{other}`",
            m.version,
            m.source()
        ));
    }
    if stated.is_empty() && !has_string(doc, &m.version) {
        return Err(format!(
            "expected the version `{}` of `{}`; the answer does not name that version",
            m.version,
            m.source()
        ));
    }
    Ok(())
}

/// `registry.latest`: the answer is the module with its provider. `list`: the answer lists
/// the latest version per provider (`…/:namespace/:name`), so it must list the module's
/// provider among others; otherwise (`…/:namespace/:name/:provider`) it must state no other.
pub fn registry_latest(doc: &Value, m: &ModuleRef, list: bool) -> Result<(), String> {
    let providers: Vec<&str> = named(doc, &m.name)
        .into_iter()
        .filter(|o| member(o, "namespace").is_none_or(|ns| ns == m.namespace))
        .filter_map(|o| member(o, "provider"))
        .collect();
    let what = if list {
        format!(
            "expected the latest versions of `{}/{}` to include the provider `{}`",
            m.namespace, m.name, m.provider
        )
    } else {
        format!("expected the latest version of `{}`", m.source())
    };
    if providers.is_empty() {
        return if registry_holds_module(doc, m) && has_string(doc, &m.provider) {
            Ok(())
        } else {
            Err(format!(
                "{what}; the answer does not name the module `{}` with the provider `{}`",
                m.name, m.provider
            ))
        };
    }
    let ok = if list {
        providers.contains(&m.provider.as_str())
    } else {
        providers.iter().all(|p| *p == m.provider)
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what}; the answer states the provider {}",
            providers
                .iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

/// The top-level `modules` array of a registry answer (TFE shape), if any.
pub fn registry_modules(doc: &Value) -> Option<&Vec<Value>> {
    doc.get("modules").and_then(Value::as_array)
}

/// A module item's identity, to tell pages apart: its `id`, else `namespace/name/provider`.
pub fn registry_item_key(item: &Value) -> String {
    if let Some(id) = item.get("id").and_then(Value::as_str) {
        return id.to_string();
    }
    let part = |k: &str| {
        item.get(k)
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    format!(
        "{}/{}/{}",
        part("namespace"),
        part("name"),
        part("provider")
    )
}

/// The offset of the next page, when the answer says there is one (`meta.next_offset`).
pub fn registry_next_offset(doc: &Value) -> Option<u64> {
    doc.pointer("/meta/next_offset").and_then(Value::as_u64)
}

/// `tfe.registry-paging` on one page asked with `offset` and `limit`: at most `limit`
/// modules, and `meta.limit` / `meta.current_offset` (when present) say what was used.
pub fn registry_page(doc: &Value, offset: u64, limit: u64) -> Result<(), String> {
    let Some(modules) = registry_modules(doc) else {
        return Ok(());
    };
    if modules.len() as u64 > limit {
        return Err(format!(
            "expected at most {limit} module(s) with `limit={limit}`, received {}",
            modules.len()
        ));
    }
    if let Some(used) = doc.pointer("/meta/limit").and_then(Value::as_u64) {
        if used != limit {
            return Err(format!(
                "expected `meta.limit` {limit} (the limit used) with `limit={limit}`, received {used}"
            ));
        }
    }
    if let Some(at) = doc.pointer("/meta/current_offset").and_then(Value::as_u64) {
        if at != offset {
            return Err(format!(
                "expected `meta.current_offset` {offset} with `offset={offset}`, received {at}"
            ));
        }
    }
    Ok(())
}

/// `tfe.registry-filters`: every module listed has `member` equal to `wanted`.
pub fn registry_filtered(
    doc: &Value,
    member: &str,
    wanted: &Value,
    sent: &str,
) -> Result<(), String> {
    let Some(modules) = registry_modules(doc) else {
        return Ok(());
    };
    let others: Vec<String> = modules
        .iter()
        .filter(|m| m.get(member) != Some(wanted))
        .map(|m| {
            format!(
                "{} ({member} {})",
                registry_item_key(m),
                m.get(member)
                    .map(Value::to_string)
                    .unwrap_or_else(|| "absent".into())
            )
        })
        .collect();
    if others.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "expected `{sent}` to list only modules whose `{member}` is {wanted}; it lists {}",
            others.join(", ")
        ))
    }
}

/// Which TFE shape an answer must have (tfe-api-facts 3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegistryShape {
    /// `…/versions`: `{modules:[{versions:[{version}]}]}`.
    Versions,
    /// One module version: `{id, namespace, name, provider, version, …}`.
    Module,
    /// A list or search: `{meta:{limit,current_offset}, modules:[{namespace,name,provider,version}]}`.
    List,
}

/// `tfe.registry-shape`.
pub fn registry_shape(doc: &Value, shape: RegistryShape) -> Result<(), String> {
    let strings_of = |o: &Value, names: &[&str]| -> Result<(), String> {
        let missing: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| o.get(*n).and_then(Value::as_str).is_none())
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!("no string {}", missing.join(", ")))
        }
    };
    let result = match shape {
        RegistryShape::Versions => match registry_modules(doc).and_then(|m| m.first()) {
            None => Err("no `modules` array with the module first".to_string()),
            Some(first) => match first.get("versions").and_then(Value::as_array) {
                None => Err("`modules[0]` has no `versions` array".to_string()),
                Some(versions) => versions.iter().enumerate().try_for_each(|(i, v)| {
                    strings_of(v, &["version"])
                        .map_err(|e| format!("`modules[0].versions[{i}]`: {e}"))
                }),
            },
        },
        RegistryShape::Module => {
            strings_of(doc, &["id", "namespace", "name", "provider", "version"]).and_then(|_| {
                let part = |k: &str| doc.get(k).and_then(Value::as_str).unwrap_or_default();
                let id = format!(
                    "{}/{}/{}/{}",
                    part("namespace"),
                    part("name"),
                    part("provider"),
                    part("version")
                );
                if part("id") == id {
                    Ok(())
                } else {
                    Err(format!("`id` is `{}`, not `{id}`", part("id")))
                }
            })
        }
        RegistryShape::List => {
            let meta = match doc.get("meta") {
                Some(meta)
                    if meta.get("limit").is_some_and(Value::is_u64)
                        && meta.get("current_offset").is_some_and(Value::is_u64) =>
                {
                    Ok(())
                }
                _ => Err("no `meta` with numbers `limit` and `current_offset`".to_string()),
            };
            meta.and_then(|_| match registry_modules(doc) {
                None => Err("no `modules` array".to_string()),
                Some(modules) => modules.iter().enumerate().try_for_each(|(i, m)| {
                    strings_of(m, &["namespace", "name", "provider", "version"])
                        .map_err(|e| format!("`modules[{i}]`: {e}"))
                }),
            })
        }
    };
    result.map_err(|e| {
        let expected = match shape {
            RegistryShape::Versions => "{\"modules\":[{\"versions\":[{\"version\":…}]}]}",
            RegistryShape::Module => {
                "{\"id\":\"ns/name/provider/version\",\"namespace\",\"name\",\"provider\",\"version\",…}"
            }
            RegistryShape::List => {
                "{\"meta\":{\"limit\",\"current_offset\"},\"modules\":[{\"namespace\",\"name\",\"provider\",\"version\"}]}"
            }
        };
        format!("expected the registry protocol's shape {expected}; {e}")
    })
}

/// A registry answer that must be a JSON document (`what`: "`offset=1&limit=1` to answer a
/// list"): a 2xx answer with a JSON body. Returns the document.
pub fn registry_answer(ex: &Exchange, what: &str) -> Result<Value, String> {
    let received = match (ex.is_success(), ex.json()) {
        (true, Ok(doc)) => return Ok(doc),
        (true, Err(e)) => format!("{} ({e})", status_text(ex.status())),
        (false, _) => transport_or_status(ex),
    };
    Err(format!("expected {what}, received {received}"))
}

/// The status of an answer, or the transport error that stood for it.
fn transport_or_status(ex: &Exchange) -> String {
    match &ex.response {
        Err(e) => e.to_string(),
        Ok(r) => r.status.to_string(),
    }
}

/// `tfe.registry-paging`: `offset=1&limit=1` answers another module than `offset=0&limit=1`
/// (`first` and `second`: the keys of the modules they answered).
pub fn registry_offset_moves(first: Option<&str>, second: Option<&str>) -> Result<(), String> {
    match (first, second) {
        (Some(a), Some(b)) if a == b => Err(format!(
            "expected `offset=1&limit=1` to answer another module than `offset=0&limit=1`; both answered {a} (twice): the offset seems ignored"
        )),
        _ => Ok(()),
    }
}

/// `registry.search`, one half: `param=<name>` lists the module (`found`, after `pages` pages).
pub fn registry_search_finds(
    found: bool,
    param: &str,
    m: &ModuleRef,
    pages: usize,
) -> Result<(), String> {
    if found {
        Ok(())
    } else {
        Err(format!(
            "expected `{param}={}` to list the module `{}`; it does not ({pages} page(s) read)",
            m.name,
            m.source()
        ))
    }
}

/// `registry.search`, the other half: `param=<no_match>`, a text no module matches, does not
/// list the module.
pub fn registry_search_excludes(
    listed: bool,
    param: &str,
    no_match: &str,
    m: &ModuleRef,
) -> Result<(), String> {
    if listed {
        Err(format!(
            "expected `{param}={no_match}`, a text no module matches, not to list the module `{}`; it does: the search text is not read from `{param}`",
            m.source()
        ))
    } else {
        Ok(())
    }
}

/// `registry.search` when the spec's `query` failed (`why`): says whether TFE's `q` works
/// instead (`q_result`), so the finding names the parameter the registry reads.
pub fn registry_search_with_q(
    why: &str,
    q_result: Result<(), String>,
    m: &ModuleRef,
    no_match: &str,
) -> String {
    match q_result {
        Ok(()) => format!(
            "{why}. With `q` instead the search works (`q={}` lists the module, `q={no_match}` does not): this registry reads `q`, not the spec's `query` (Query column: `query (the search text)`)",
            m.name
        ),
        Err(q_why) => {
            format!("{why}; `q`, TFE's name for the search text, does not work either: {q_why}")
        }
    }
}

/// `tfe.registry-download`: a download answers with an `X-Terraform-Get` header.
pub fn registry_download_header(ex: &Exchange) -> Result<(), String> {
    if ex.header("x-terraform-get").is_some() {
        Ok(())
    } else {
        Err(format!(
            "expected 204 with an X-Terraform-Get header, received {} without it",
            status_text(ex.status())
        ))
    }
}

/// `registry.download-source`: the download named a source at all (`offered`).
pub fn registry_source_offered(offered: bool, ex: &Exchange) -> Result<(), String> {
    if offered {
        Ok(())
    } else {
        Err(format!(
            "expected the download to give the module's source (an X-Terraform-Get address, a redirect or the archive); it answered {} with neither",
            transport_or_status(ex)
        ))
    }
}

/// The kinds of archive a module source may be: go-getter unpacks each of them, told by the
/// address's `archive=` parameter or its file name's ending (the module registry protocol:
/// "a source address", go-getter's "Unarchiving"), not only the gzip tarball TFE serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveKind {
    /// `zip`.
    Zip,
    /// gzip: `tar.gz`, `tgz`, `gz`.
    Gzip,
    /// bzip2: `tar.bz2`, `tbz2`, `bz2`.
    Bzip2,
    /// xz: `tar.xz`, `txz`, `xz`.
    Xz,
    /// zstd: `tar.zst`, `tzst`, `zst`.
    Zstd,
    /// A plain `tar`.
    Tar,
}

impl ArchiveKind {
    /// The kind a name says (`zip`, `tar.gz`, `tgz`…: an `archive=` value or a file name's
    /// ending), if any.
    pub fn named(name: &str) -> Option<Self> {
        let name = name.to_ascii_lowercase();
        let ends = |e: &[&str]| {
            e.iter()
                .any(|x| name == *x || name.ends_with(&format!(".{x}")))
        };
        if ends(&["zip"]) {
            Some(Self::Zip)
        } else if ends(&["tar.gz", "tgz", "gz"]) {
            Some(Self::Gzip)
        } else if ends(&["tar.bz2", "tbz2", "bz2"]) {
            Some(Self::Bzip2)
        } else if ends(&["tar.xz", "txz", "xz"]) {
            Some(Self::Xz)
        } else if ends(&["tar.zst", "tzst", "zst"]) {
            Some(Self::Zstd)
        } else if ends(&["tar"]) {
            Some(Self::Tar)
        } else {
            None
        }
    }

    /// The kind the bytes are, by their magic numbers, if an archive at all.
    pub fn of(bytes: &[u8]) -> Option<Self> {
        if is_gzip(bytes) {
            Some(Self::Gzip)
        } else if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
            Some(Self::Zip)
        } else if bytes.starts_with(b"BZh") {
            Some(Self::Bzip2)
        } else if bytes.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
            Some(Self::Xz)
        } else if bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Self::Zstd)
        } else if bytes.get(257..262) == Some(b"ustar") {
            Some(Self::Tar)
        } else {
            None
        }
    }

    /// The name said in findings.
    pub fn word(self) -> &'static str {
        match self {
            Self::Zip => "zip",
            Self::Gzip => "gzip",
            Self::Bzip2 => "bzip2",
            Self::Xz => "xz",
            Self::Zstd => "zstd",
            Self::Tar => "tar",
        }
    }
}

/// The kind of archive a source address names: its `archive=` parameter, else its file
/// name's ending (go-getter's rules), without a forced getter (`https::`) or a `//subdir`.
pub fn archive_named(address: &str) -> Option<ArchiveKind> {
    let text = address.trim();
    let text = match text.split_once("::") {
        Some((getter, rest)) if getter.chars().all(|c| c.is_ascii_alphanumeric()) => rest,
        _ => text,
    };
    let (path, query) = text.split_once('?').unwrap_or((text, ""));
    let param = query
        .split('&')
        .find_map(|pair| pair.strip_prefix("archive="));
    if let Some(value) = param {
        return ArchiveKind::named(value);
    }
    let start = path.find("://").map_or(0, |i| i + 3);
    let path = match path[start..].find("//") {
        Some(at) => &path[..start + at],
        None => path,
    };
    ArchiveKind::named(path.rsplit('/').next().unwrap_or(path))
}

/// Where a registry download gives the module's source: its `X-Terraform-Get` header, else
/// the `location` member of a JSON body (the registry protocol's other form of a download's
/// answer); `None` when it gives neither.
pub fn registry_source_address(ex: &Exchange) -> Option<String> {
    if let Some(value) = ex.header("x-terraform-get") {
        return Some(value.to_string());
    }
    let doc = ex.json().ok()?;
    doc.get("location")?.as_str().map(str::to_string)
}

/// How a fetched source was judged, when it passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceSeen {
    /// The very bytes the run uploaded.
    Uploaded,
    /// An archive of the kind its address names (or, unnamed, of a kind go-getter unpacks),
    /// not compared byte for byte: a `--module` module, or a server that serves the module
    /// in another kind of archive than the one uploaded.
    ArchiveOfItsKind(ArchiveKind),
}

/// `registry.download-source`: the fetched source (`ex`) of `module`, whose address names an
/// archive kind (`named`, [`archive_named`]), is the archive the run `uploaded`; or an archive
/// of another kind than the upload (a server may repack what it serves: the protocol promises
/// a source go-getter can fetch, not the uploaded bytes) that is of the kind its address
/// names; for a module given with `--module`, a non-empty archive of the kind its address
/// names (unnamed: any kind go-getter unpacks).
pub fn registry_source(
    ex: &Exchange,
    module: &str,
    uploaded: Option<&[u8]>,
    named: Option<ArchiveKind>,
) -> Result<SourceSeen, String> {
    let body = ex.body();
    let got = format!(
        "received {} with {} bytes{}",
        transport_or_status(ex),
        body.len(),
        if ex.response.as_ref().is_ok_and(|r| r.truncated) {
            " (cut at the response size cap)"
        } else {
            ""
        }
    );
    let kind = ArchiveKind::of(body).filter(|_| ex.is_success());
    let of_its_kind = kind.filter(|k| named.is_none_or(|n| n == *k));
    let mismatch = match (kind, named) {
        (Some(k), Some(n)) if k != n => format!(
            ", a {} archive where its address names a {} one",
            k.word(),
            n.word()
        ),
        _ => String::new(),
    };
    match uploaded {
        Some(bytes) if ex.is_success() && body == bytes && mismatch.is_empty() => {
            Ok(SourceSeen::Uploaded)
        }
        Some(bytes) => match of_its_kind {
            Some(k) if ArchiveKind::of(bytes).is_some_and(|u| u != k) => Ok(SourceSeen::ArchiveOfItsKind(k)),
            _ => Err(format!(
                "expected the source of `{module}` to be the archive the run uploaded ({} bytes), or an archive of another kind that its address names; {got}{mismatch}",
                bytes.len()
            )),
        },
        None => match of_its_kind {
            Some(k) => Ok(SourceSeen::ArchiveOfItsKind(k)),
            None => Err(format!(
                "expected the source of `{module}` (given with --module) to be a non-empty archive{}; {got}{}",
                named.map(|n| format!(" ({}, as its address names)", n.word())).unwrap_or_default(),
                if !mismatch.is_empty() {
                    mismatch
                } else if ex.is_success() && !body.is_empty() {
                    ", which starts with the magic bytes of no archive (gzip 1f 8b, zip PK)".to_string()
                } else {
                    String::new()
                }
            )),
        },
    }
}

/// `true` when the bytes start with the gzip magic bytes (`1f 8b`).
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.len() > 2 && bytes[0] == 0x1f && bytes[1] == 0x8b
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m() -> ModuleRef {
        ModuleRef {
            namespace: "acme".into(),
            name: "network".into(),
            provider: "aws".into(),
            version: "1.0.0".into(),
        }
    }

    #[test]
    fn versions_must_list_the_version() {
        let ok =
            json!({"modules":[{"source":"acme/network/aws","versions":[{"version":"1.0.0"}]}]});
        assert!(registry_versions_listed(&ok, &m()).is_ok());
        let empty = json!({"modules":[{"source":"acme/network/aws","versions":[]}]});
        let err = registry_versions_listed(&empty, &m()).unwrap_err();
        assert!(err.contains("lists no version"), "{err}");
        assert!(registry_shape(&ok, RegistryShape::Versions).is_ok());
        assert!(registry_shape(&json!({"versions":["1.0.0"]}), RegistryShape::Versions).is_err());
    }

    #[test]
    fn a_version_page_of_another_version_fails() {
        let doc = |v: &str| json!({"id": format!("acme/network/aws/{v}"), "namespace":"acme","name":"network","provider":"aws","version":v,"versions":["1.0.0", v]});
        assert!(registry_version_answered(&doc("1.0.0"), &m()).is_ok());
        let err = registry_version_answered(&doc("1.0.1"), &m()).unwrap_err();
        assert!(err.contains("states version `1.0.1`"), "{err}");
        assert!(registry_shape(&doc("1.0.1"), RegistryShape::Module).is_ok());
        // shape-free answers are judged by the strings they hold
        assert!(registry_version_answered(&json!(["acme/network/aws", "1.0.0"]), &m()).is_ok());
    }

    #[test]
    fn latest_names_the_provider() {
        let one =
            |p: &str| json!({"namespace":"acme","name":"network","provider":p,"version":"1.0.0"});
        assert!(registry_latest(&one("aws"), &m(), false).is_ok());
        assert!(registry_latest(&one("google"), &m(), false).is_err());
        let list = json!({"modules":[one("google"), one("aws")]});
        assert!(registry_latest(&list, &m(), true).is_ok());
        assert!(registry_latest(&list, &m(), false).is_err());
    }

    #[test]
    fn the_module_is_found_by_name_and_namespace() {
        let list = json!({"modules":[{"namespace":"other","name":"network","provider":"aws"}]});
        assert!(!registry_holds_module(&list, &m()));
        let list = json!({"modules":[{"namespace":"acme","name":"network","provider":"aws"}]});
        assert!(registry_holds_module(&list, &m()));
        assert!(registry_holds_module(
            &json!({"source":"acme/network/aws"}),
            &m()
        ));
        assert!(!registry_holds_module(&json!({"modules":[]}), &m()));
    }

    #[test]
    fn pages_and_filters() {
        let page = json!({"meta":{"limit":1,"current_offset":0},"modules":[{"provider":"aws"}]});
        assert!(registry_page(&page, 0, 1).is_ok());
        let ignored =
            json!({"meta":{"limit":15,"current_offset":0},"modules":[{"provider":"aws"}]});
        assert!(registry_page(&ignored, 0, 1)
            .unwrap_err()
            .contains("meta.limit"));
        assert!(registry_filtered(&page, "provider", &json!("aws"), "provider=aws").is_ok());
        assert!(registry_filtered(&page, "provider", &json!("zz"), "provider=zz").is_err());
        assert!(registry_shape(&page, RegistryShape::List).is_err());
        assert!(is_gzip(&[0x1f, 0x8b, 8]) && !is_gzip(b"PK\x03"));
    }

    #[test]
    fn registry_answers_searches_and_sources_are_judged_by_what_came() {
        use crate::checks::testing::exchange;
        let json = exchange(200, "application/json", r#"{"modules":[]}"#);
        assert!(registry_answer(&json, "a list").is_ok());
        let html = exchange(200, "text/html", "<html>");
        assert!(registry_answer(&html, "a list")
            .unwrap_err()
            .starts_with("expected a list, received 200 ("));
        assert_eq!(
            registry_answer(&exchange(404, "", ""), "a list").unwrap_err(),
            "expected a list, received 404"
        );
        assert!(registry_offset_moves(Some("a"), Some("b")).is_ok());
        assert!(registry_offset_moves(Some("a"), None).is_ok());
        assert!(registry_offset_moves(Some("a"), Some("a"))
            .unwrap_err()
            .contains("offset seems ignored"));
        let m = m();
        assert!(registry_search_finds(true, "query", &m, 1).is_ok());
        assert!(registry_search_finds(false, "query", &m, 2)
            .unwrap_err()
            .contains("(2 page(s) read)"));
        assert!(registry_search_excludes(false, "query", "zzz", &m).is_ok());
        assert!(registry_search_excludes(true, "query", "zzz", &m).is_err());
        let with_q = registry_search_with_q("why", Ok(()), &m, "zzz");
        assert!(with_q.contains("this registry reads `q`"), "{with_q}");
        let neither = registry_search_with_q("why", Err("no".into()), &m, "zzz");
        assert!(neither.contains("does not work either: no"), "{neither}");
        assert!(registry_download_header(&exchange(204, "", "")).is_err());
        assert!(registry_source_offered(true, &exchange(204, "", "")).is_ok());
        assert!(registry_source_offered(false, &exchange(204, "", "")).is_err());
        let mut archive = exchange(200, "application/gzip", "");
        let bytes = vec![0x1f, 0x8b, 8, 0];
        if let Ok(answer) = &mut archive.response {
            answer.body = bytes.clone();
        }
        let gz = Some(ArchiveKind::Gzip);
        assert_eq!(
            registry_source(&archive, "acme/network/aws", Some(&bytes), gz),
            Ok(SourceSeen::Uploaded)
        );
        assert!(registry_source(&archive, "acme/network/aws", None, gz).is_ok());
        assert!(registry_source(&archive, "acme/network/aws", None, None).is_ok());
        assert!(registry_source(&archive, "acme/network/aws", Some(b"other"), gz).is_err());
        // a gzip where the address names a zip is not the archive it says
        let err = registry_source(&archive, "m", None, Some(ArchiveKind::Zip)).unwrap_err();
        assert!(
            err.contains("a gzip archive where its address names a zip one"),
            "{err}"
        );
        let text = exchange(200, "text/plain", "plain");
        assert!(registry_source(&text, "acme/network/aws", None, None)
            .unwrap_err()
            .contains("magic bytes of no archive"));
    }

    #[test]
    fn a_source_may_be_any_archive_the_protocol_allows() {
        use crate::checks::testing::exchange;
        assert_eq!(
            archive_named("/v1/object/x?archive=zip"),
            Some(ArchiveKind::Zip)
        );
        assert_eq!(
            archive_named("https::https://h/m.tgz//sub?x=1"),
            Some(ArchiveKind::Gzip)
        );
        assert_eq!(archive_named("https://h/m.zip"), Some(ArchiveKind::Zip));
        assert_eq!(
            archive_named("https://h/m.tar.bz2"),
            Some(ArchiveKind::Bzip2)
        );
        assert_eq!(archive_named("https://h/object/x"), None);
        assert_eq!(ArchiveKind::of(b"PK\x03\x04rest"), Some(ArchiveKind::Zip));
        assert_eq!(ArchiveKind::of(b"plain"), None);
        let mut zip = exchange(200, "application/zip", "");
        if let Ok(answer) = &mut zip.response {
            answer.body = b"PK\x03\x04zipped".to_vec();
        }
        let uploaded = [0x1f, 0x8b, 8, 0];
        // the run uploaded a gzip tarball; the server serves a zip its address names
        let zipped = Some(ArchiveKind::Zip);
        assert_eq!(
            registry_source(&zip, "m", Some(&uploaded), zipped),
            Ok(SourceSeen::ArchiveOfItsKind(ArchiveKind::Zip))
        );
        // ... but not a zip its address calls a gzip tarball
        assert!(registry_source(&zip, "m", Some(&uploaded), Some(ArchiveKind::Gzip)).is_err());
        // nor the uploaded gzip tarball at an address that names a zip
        let mut gzip = exchange(200, "application/gzip", "");
        if let Ok(answer) = &mut gzip.response {
            answer.body = uploaded.to_vec();
        }
        let err = registry_source(&gzip, "m", Some(&uploaded), zipped).unwrap_err();
        assert!(
            err.contains("a gzip archive where its address names a zip one"),
            "{err}"
        );
        let location = exchange(200, "application/json", r#"{"location":"./m.zip"}"#);
        assert_eq!(
            registry_source_address(&location).as_deref(),
            Some("./m.zip")
        );
        assert_eq!(registry_source_address(&exchange(204, "", "")), None);
    }
}
