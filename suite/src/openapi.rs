//! `conform openapi`: the contract the suite checks, as an OpenAPI 3.1 document.
//!
//! Everything comes from the catalog (`cases/`) and the schemas (`schemas/`) at run time; this
//! module only knows how to say them in OpenAPI. Every endpoint is written under both path
//! forms (bare and `/api/v2`, Versioning 1), with its deprecated and alias spellings; path
//! parameters, the documented query parameters (paged endpoints also get the spec's `page` /
//! `page_size` and TFE's `page[number]` / `page[size]`), request bodies inferred from the
//! payload templates, and answers referencing the schemas (`envelope/single`, `envelope/list`,
//! `tfe/error`). The registry read protocol is under its own server; the upload address
//! (`/v1/object/<object_id>`, Versioning 2) takes no token. Creates and deletes the suite sends
//! to make its fixtures but that are no row of the spec (workspaces) are included, marked
//! `x-conform-fixture`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde_json::{json, Map, Value};

use crate::catalog::{path_for, BodyKind, Catalog, Endpoint, Kind, QueryParam, Variant};
use crate::catalog::{REGISTRY, UPLOAD};
use crate::checks::Schemas;
use crate::exit::ExitCodes;

/// The OpenAPI version written.
pub const OPENAPI_VERSION: &str = "3.1.0";
/// The media type of JSON:API documents.
const JSONAPI: &str = "application/vnd.api+json";
/// Where the registry read protocol lives when discovery says nothing else (tfe-api-facts 3.1).
pub const REGISTRY_SERVER: &str = "/api/registry/v1/modules";
/// Name of the bearer security scheme.
const BEARER: &str = "bearerAuth";

/// Options of `conform openapi`.
#[derive(Debug, Args)]
pub struct OpenapiArgs {
    /// Write the document to this file instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Read the catalog from this folder instead of the embedded one.
    #[arg(long, value_name = "DIR")]
    pub cases: Option<PathBuf>,
    /// Read the schemas from this folder instead of the embedded ones.
    #[arg(long, value_name = "DIR")]
    pub schemas: Option<PathBuf>,
}

/// `conform openapi`: writes the document; exit 2 when the catalog or schemas cannot be read.
pub fn command(args: &OpenapiArgs) -> ExitCode {
    let built = load(args.cases.as_deref(), args.schemas.as_deref()).map(|d| {
        let mut text = serde_json::to_string_pretty(&d).unwrap_or_default();
        text.push('\n');
        text
    });
    let text = match built {
        Ok(text) => text,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(ExitCodes::CONFIG);
        }
    };
    match &args.output {
        Some(path) => match std::fs::write(path, text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: cannot write {}: {e}", path.display());
                ExitCode::from(ExitCodes::CONFIG)
            }
        },
        None => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            // A closed pipe (`| head`) is not an error of the document.
            let _ = out.write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
    }
}

/// The document of the catalog and schemas in these folders (embedded ones for `None`).
pub fn load(cases: Option<&Path>, schemas: Option<&Path>) -> Result<Value, String> {
    let catalog = match cases {
        Some(dir) => Catalog::from_dir(dir),
        None => Catalog::embedded(),
    }
    .map_err(|e| e.to_string())?;
    let schemas = Schemas::documents(schemas).map_err(|e| e.to_string())?;
    Ok(document(&catalog, &schemas))
}

/// The component name of a schema id (`envelope/single` -> `envelope.single`).
pub fn component_name(schema_id: &str) -> String {
    schema_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '.'
            }
        })
        .collect()
}

fn schema_ref(schema_id: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{}", component_name(schema_id)) })
}

/// Where an operation is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Server {
    Api,
    Registry,
}

/// The paths object under construction: path templates by shape, so that two catalog paths
/// differing only in their parameters' names share one template (OpenAPI forbids both).
#[derive(Default)]
struct Paths {
    /// Shape (parameters as `{}`) -> (the template written, its server, its operations by method).
    items: BTreeMap<String, (String, Server, Map<String, Value>)>,
}

impl Paths {
    /// Adds an operation; `false` when the path and method are already taken (the first
    /// catalog row keeps them; the later one is named in its `x-conform-tests`).
    fn add(&mut self, server: Server, template: &str, method: &str, op: Value) -> bool {
        let parts = segments(template);
        let shape = parts
            .iter()
            .map(|s| match s {
                Segment::Literal(l) => l.clone(),
                Segment::Param(_) => "{}".to_string(),
            })
            .collect::<Vec<_>>()
            .join("/");
        let key = format!("{server:?} /{shape}");
        let method = method.to_ascii_lowercase();
        let written = match self.items.get(&key) {
            Some((t, _, _)) => t.clone(),
            None => openapi_path(&parts),
        };
        let names: Vec<String> = segments(&written)
            .into_iter()
            .filter_map(|s| match s {
                Segment::Param(p) => Some(p),
                Segment::Literal(_) => None,
            })
            .collect();
        let entry = self
            .items
            .entry(key)
            .or_insert_with(|| (written, server, Map::new()));
        if let Some(existing) = entry.2.get_mut(&method) {
            let tests = op
                .get("x-conform-tests")
                .cloned()
                .unwrap_or_else(|| json!([]));
            if let Some(list) = existing
                .get_mut("x-conform-tests")
                .and_then(Value::as_array_mut)
            {
                list.extend(tests.as_array().cloned().unwrap_or_default());
            }
            return false;
        }
        let mut op = op;
        let mut params: Vec<Value> = names
            .iter()
            .map(|n| {
                json!({
                    "name": n, "in": "path", "required": true,
                    "schema": { "type": "string", "minLength": 1 },
                })
            })
            .collect();
        if let Some(query) = op.get("parameters").and_then(Value::as_array) {
            params.extend(query.iter().cloned());
        }
        if !params.is_empty() {
            op["parameters"] = Value::Array(params);
        }
        entry.2.insert(method, op);
        true
    }

    fn into_value(self) -> (Value, usize) {
        let mut paths = Map::new();
        let mut count = 0;
        for (_, (template, server, mut ops)) in self.items {
            count += ops.len();
            if server == Server::Registry {
                ops.insert(
                    "servers".into(),
                    json!([{
                        "url": REGISTRY_SERVER,
                        "description": "the module registry read protocol: its address comes from service discovery (`/.well-known/terraform.json`, key `modules.v1`); this is the default"
                    }]),
                );
            }
            // A registry path that is also a path of the API is written in full instead,
            // without its own server (two path items cannot share a template).
            if server == Server::Registry && paths.contains_key(&template) {
                ops.remove("servers");
                let full = format!("{REGISTRY_SERVER}{}", template.trim_end_matches('/'));
                paths.insert(full, Value::Object(ops));
            } else {
                paths.insert(template, Value::Object(ops));
            }
        }
        (Value::Object(paths), count)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Param(String),
}

/// The segments of a catalog path (`:param`) or an OpenAPI one (`{param}`).
fn segments(path: &str) -> Vec<Segment> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            if let Some(p) = s.strip_prefix(':') {
                Segment::Param(p.to_string())
            } else if let Some(p) = s.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                Segment::Param(p.to_string())
            } else {
                Segment::Literal(s.to_string())
            }
        })
        .collect()
}

fn openapi_path(segments: &[Segment]) -> String {
    let mut out = String::new();
    for s in segments {
        out.push('/');
        match s {
            Segment::Literal(l) => out.push_str(l),
            Segment::Param(p) => {
                out.push('{');
                out.push_str(p);
                out.push('}');
            }
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// The OpenAPI 3.1 document of a catalog, with `schemas` (id, JSON Schema) as components.
pub fn document(catalog: &Catalog, schemas: &[(String, Value)]) -> Value {
    let mut paths = Paths::default();
    let mut tags = Vec::new();
    for group in &catalog.groups {
        tags.push(json!({ "name": group.group, "description": format!("{} (spec: {})", group.title, group.spec) }));
        for endpoint in &group.endpoints {
            add_endpoint(&mut paths, catalog, &group.group, &group.spec, endpoint);
        }
    }
    add_fixture_routes(&mut paths, catalog);
    let (mut paths, operations) = paths.into_value();
    add_links(&mut paths, catalog);

    let mut components = Map::new();
    for (id, schema) in schemas {
        let mut schema = schema.clone();
        if let Some(obj) = schema.as_object_mut() {
            // A component is resolved against the document, not the schema's own id.
            obj.remove("$id");
            obj.remove("$schema");
        }
        components.insert(component_name(id), schema);
    }
    json!({
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "Infrastructure Automation Service API: the contract conform checks",
            "version": env!("CARGO_PKG_VERSION"),
            "description": format!(
                "Generated by `conform openapi` from the catalog ({}) and `schemas/`: {operations} operations. Every endpoint is under both path forms (bare and `/api/v2`, Versioning 1). Answers reference the core envelopes; `tfe.*` schemas are TFE conventions (tfe-api-facts), required only at `--profile tfe`.",
                catalog.origin
            ),
        },
        "servers": [{ "url": "/", "description": "the service root (`--target`)" }],
        "security": [{ BEARER: [] }],
        "tags": tags,
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                BEARER: {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "an API token, as `Authorization: Bearer <token>` (tfe-api-facts 0.1); the `/admin` routes need an administrator's",
                },
            },
        },
    })
}

fn add_endpoint(paths: &mut Paths, catalog: &Catalog, group: &str, spec: &str, e: &Endpoint) {
    let op_for = |variant: Variant| {
        let mut op = operation(catalog, e, e.payload.as_deref());
        op["operationId"] = json!(format!("{group}.{}.{}", e.id, variant.as_str()));
        op["tags"] = json!([group]);
        op["summary"] = json!(format!("{} ({:?}) — {spec}", e.id, e.kind).to_lowercase());
        op["x-conform-tests"] = json!([format!("{group}::{}::{}", e.id, variant.as_str())]);
        if let Some(note) = &e.note {
            op["description"] = json!(note);
        }
        if matches!(variant, Variant::Deprecated | Variant::DeprecatedApiV2) {
            op["deprecated"] = json!(true);
        }
        if e.admin {
            op["x-conform-admin"] = json!(true);
        }
        op
    };
    if let Some(rest) = e.path.strip_prefix(REGISTRY) {
        let op = op_for(Variant::Registry);
        paths.add(Server::Registry, rest, &e.method, op);
        return;
    }
    if e.path.starts_with(UPLOAD) {
        let mut op = op_for(Variant::Upload);
        op["security"] = json!([]);
        op["description"] = json!("the upload address a create answered (Versioning 2: its path has the form /v1/object/<object_id>); it carries its own secret and takes no token (tfe-api-facts 0.10)");
        paths.add(Server::Api, "/v1/object/:object_id", &e.method, op);
        return;
    }
    let mut forms = vec![(
        Variant::Bare,
        Variant::ApiV2,
        e.method.clone(),
        e.path.clone(),
    )];
    if let Some(d) = &e.deprecated {
        forms.push((
            Variant::Deprecated,
            Variant::DeprecatedApiV2,
            d.method.clone(),
            d.path.clone(),
        ));
    }
    if let Some(a) = &e.alias {
        forms.push((
            Variant::Alias,
            Variant::AliasApiV2,
            a.method.clone(),
            a.path.clone(),
        ));
    }
    for (bare, prefixed, method, path) in forms {
        for variant in [bare, prefixed] {
            paths.add(
                Server::Api,
                &path_for(&path, variant),
                &method,
                op_for(variant),
            );
        }
    }
}

/// OpenAPI links from each create to the show of what it made (same path form): the show's
/// last path parameter is the created `data.id`, the others are the create's own path
/// parameters of the same name. Tools that follow links (schemathesis' stateful phase) then
/// reach real resources.
fn add_links(paths: &mut Value, catalog: &Catalog) {
    let mut index: BTreeMap<String, (String, String)> = BTreeMap::new();
    if let Some(items) = paths.as_object() {
        for (path, item) in items {
            for (method, op) in item.as_object().into_iter().flatten() {
                if let Some(id) = op.get("operationId").and_then(Value::as_str) {
                    index.insert(id.to_string(), (path.clone(), method.clone()));
                }
            }
        }
    }
    let params_of = |path: &str| -> Vec<String> {
        segments(path)
            .into_iter()
            .filter_map(|s| match s {
                Segment::Param(p) => Some(p),
                Segment::Literal(_) => None,
            })
            .collect()
    };
    for (group, e) in catalog.endpoints() {
        let (Kind::Create, Some(kind)) = (e.kind, e.resource.as_deref()) else {
            continue;
        };
        let Some((show_group, show)) = catalog.show_of(kind) else {
            continue;
        };
        for variant in [Variant::Bare, Variant::ApiV2] {
            let create_id = format!("{}.{}.{}", group.group, e.id, variant.as_str());
            let show_id = format!("{}.{}.{}", show_group.group, show.id, variant.as_str());
            let (Some((create_path, create_method)), Some((show_path, _))) =
                (index.get(&create_id), index.get(&show_id))
            else {
                continue;
            };
            let create_params = params_of(create_path);
            let show_params = params_of(show_path);
            let Some((own, others)) = show_params.split_last() else {
                continue;
            };
            let mut parameters = Map::new();
            parameters.insert(own.clone(), json!("$response.body#/data/id"));
            for p in others {
                if create_params.contains(p) {
                    parameters.insert(p.clone(), json!(format!("$request.path.{p}")));
                }
            }
            let link = json!({
                "operationId": show_id,
                "parameters": parameters,
                "description": format!("show the {kind} this create made"),
            });
            let Some(responses) = paths
                .get_mut(create_path)
                .and_then(|item| item.get_mut(create_method))
                .and_then(|op| op.get_mut("responses"))
                .and_then(Value::as_object_mut)
            else {
                continue;
            };
            for (code, response) in responses.iter_mut() {
                if code.starts_with('2') {
                    response["links"] = json!({ "show": link.clone() });
                }
            }
        }
    }
}

/// Creates and deletes of `resources.toml` the groups do not hold (TFE routes the suite
/// needs for its fixtures, such as the workspace create).
fn add_fixture_routes(paths: &mut Paths, catalog: &Catalog) {
    // The kind a payload is named after first (`workspace.json` is the workspace's create,
    // which `tagged_workspace` also sends).
    let mut kinds: Vec<_> = catalog.graph.resources.iter().collect();
    kinds.sort_by_key(|(kind, def)| {
        let own = def
            .create
            .as_ref()
            .and_then(|r| r.payload.as_deref())
            .is_some_and(|p| p == format!("{kind}.json"));
        (!own, kind.len(), kind.to_string())
    });
    for (kind, def) in kinds {
        for (route, what) in def
            .create
            .iter()
            .map(|r| (r, Kind::Create))
            .chain(def.delete.iter().map(|r| (r, Kind::Delete)))
        {
            let covered = catalog.endpoints().any(|(_, e)| {
                e.method == route.method
                    && shape(&path_for(&e.path, Variant::Bare))
                        == shape(&path_for(&route.path, Variant::Bare))
            });
            if covered || route.path.starts_with('{') {
                continue;
            }
            let fake = Endpoint {
                kind: what,
                body: if route.payload.is_some() {
                    BodyKind::Json
                } else {
                    BodyKind::None
                },
                ..placeholder_endpoint(&route.method, &route.path)
            };
            for variant in [Variant::Bare, Variant::ApiV2] {
                let mut op = operation(catalog, &fake, route.payload.as_deref());
                let verb = if what == Kind::Create {
                    "create"
                } else {
                    "delete"
                };
                op["operationId"] = json!(format!("fixtures.{kind}.{verb}.{}", variant.as_str()));
                op["tags"] = json!(["fixtures"]);
                op["summary"] = json!(format!(
                    "{verb} a {kind} (how the suite makes its fixtures; source: {})",
                    def.source.as_deref().unwrap_or("the spec")
                ));
                op["x-conform-fixture"] = json!(kind);
                paths.add(
                    Server::Api,
                    &path_for(&route.path, variant),
                    &route.method,
                    op,
                );
            }
        }
    }
}

fn placeholder_endpoint(method: &str, path: &str) -> Endpoint {
    Endpoint {
        id: String::new(),
        method: method.to_string(),
        path: path.to_string(),
        kind: Kind::Action,
        resource: None,
        body: BodyKind::None,
        payload: None,
        query: Vec::new(),
        paged: false,
        fresh: Vec::new(),
        before: Vec::new(),
        after: Vec::new(),
        lock: None,
        expect: Default::default(),
        admin: false,
        echo: None,
        requires: Vec::new(),
        precondition: None,
        deprecated: None,
        alias: None,
        note: None,
        params: BTreeMap::new(),
    }
}

fn shape(path: &str) -> String {
    segments(path)
        .iter()
        .map(|s| match s {
            Segment::Literal(l) => l.as_str(),
            Segment::Param(_) => "{}",
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// One operation object: query parameters, request body, answers.
fn operation(catalog: &Catalog, e: &Endpoint, payload: Option<&str>) -> Value {
    let mut op = Map::new();
    let mut query: Vec<QueryParam> = e.query.clone();
    if e.paged {
        for name in ["page", "page_size", "page[number]", "page[size]"] {
            query.push(QueryParam {
                name: name.into(),
                required: false,
                paged: true,
                value: None,
            });
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    let params: Vec<Value> = query
        .iter()
        .filter(|q| seen.insert(q.name.clone()))
        .map(|q| {
            let schema = if q.paged {
                let max = if q.name.contains("size") {
                    json!(100)
                } else {
                    Value::Null
                };
                let mut s = json!({ "type": "integer", "minimum": 1 });
                if !max.is_null() {
                    s["maximum"] = max;
                }
                s
            } else {
                json!({ "type": "string" })
            };
            let mut p =
                json!({ "name": q.name, "in": "query", "required": q.required, "schema": schema });
            if q.paged {
                p["description"] = json!(if q.name.contains('[') {
                    "TFE paging (tfe-api-facts 0.5)"
                } else {
                    "paging (spec: Endpoints conventions, paged; Limits 1)"
                });
            }
            p
        })
        .collect();
    if !params.is_empty() {
        op.insert("parameters".into(), Value::Array(params));
    }
    match e.body {
        BodyKind::Json => {
            let template = payload
                .and_then(|p| catalog.payload(p))
                .and_then(|t| serde_json::from_str::<Value>(t).ok());
            let (schema, example) = match &template {
                Some(t) => (infer_schema(t), fill_example(t)),
                None => (json!({ "type": "object" }), Value::Null),
            };
            let mut media = json!({ "schema": schema });
            if !example.is_null() {
                media["example"] = example;
            }
            op.insert(
                "requestBody".into(),
                json!({ "required": true, "content": { JSONAPI: media } }),
            );
        }
        BodyKind::Tarball => {
            op.insert(
                "requestBody".into(),
                json!({ "required": true, "content": { "application/octet-stream": { "schema": { "type": "string", "contentMediaType": "application/gzip" } } } }),
            );
        }
        BodyKind::None => {}
    }
    op.insert("responses".into(), responses(e));
    Value::Object(op)
}

fn responses(e: &Endpoint) -> Value {
    let doc = |schema: Value, description: &str| json!({ "description": description, "content": { JSONAPI: { "schema": schema } } });
    let single = || doc(schema_ref("envelope/single"), "one resource");
    let mut out = Map::new();
    let codes = |default: &[u16]| -> Vec<String> {
        let codes: &[u16] = if e.expect.status.is_empty() {
            default
        } else {
            &e.expect.status
        };
        codes.iter().map(u16::to_string).collect()
    };
    match e.kind {
        Kind::Create => {
            for code in codes(&[201]) {
                out.insert(code, single());
            }
        }
        Kind::Show | Kind::Update => {
            for code in codes(&[200]) {
                out.insert(code, single());
            }
        }
        Kind::List => {
            for code in codes(&[200]) {
                out.insert(code, doc(schema_ref("envelope/list"), "a list"));
            }
        }
        Kind::Delete | Kind::Relationship => {
            for code in codes(&[204]) {
                out.insert(code, json!({ "description": "done, no document" }));
            }
        }
        Kind::Action | Kind::Upload => {
            out.insert(
                "2XX".into(),
                json!({ "description": "done (TFE: 202 for run actions and archive, 200 otherwise); a body, if any, is JSON" }),
            );
        }
        Kind::Read => {
            out.insert(
                "200".into(),
                json!({ "description": "a JSON document (not a JSON:API resource)", "content": { "application/json": { "schema": {} } } }),
            );
        }
        Kind::Download => {
            out.insert(
                "2XX".into(),
                json!({ "description": "the bytes, or 204 with the address in X-Terraform-Get (tfe-api-facts 3.3)", "headers": { "X-Terraform-Get": { "schema": { "type": "string" } } } }),
            );
            out.insert(
                "3XX".into(),
                json!({ "description": "a redirect to the source" }),
            );
        }
    }
    out.insert(
        "4XX".into(),
        doc(
            schema_ref("tfe/error"),
            "refused: TFE answers a JSON:API error document (tfe-api-facts 0.3, 1.3)",
        ),
    );
    Value::Object(out)
}

/// A JSON Schema for bodies shaped like a payload template: every member present is required,
/// `data.type` is the template's own, placeholders are strings.
fn infer_schema(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut props = Map::new();
            for (k, item) in map {
                let schema = match (k.as_str(), item) {
                    ("type", Value::String(t)) if !t.contains("{{") => json!({ "const": t }),
                    _ => infer_schema(item),
                };
                props.insert(k.clone(), schema);
            }
            let required: Vec<&String> = map.keys().collect();
            json!({ "type": "object", "properties": props, "required": required })
        }
        Value::Array(items) => match items.first() {
            Some(first) => json!({ "type": "array", "items": infer_schema(first) }),
            None => json!({ "type": "array" }),
        },
        Value::String(_) => json!({ "type": "string" }),
        Value::Bool(_) => json!({ "type": "boolean" }),
        Value::Number(n) if n.is_i64() || n.is_u64() => json!({ "type": "integer" }),
        Value::Number(_) => json!({ "type": "number" }),
        Value::Null => json!({}),
    }
}

/// The template with every `{{placeholder}}` replaced by an example value.
fn fill_example(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fill_example(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(fill_example).collect()),
        Value::String(s) if s.contains("{{") => {
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(start) = rest.find("{{") {
                out.push_str(&rest[..start]);
                match rest[start..].find("}}") {
                    Some(end) => {
                        out.push_str("example");
                        rest = &rest[start + end + 2..];
                    }
                    None => {
                        rest = &rest[start..];
                        break;
                    }
                }
            }
            out.push_str(rest);
            Value::String(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_differing_in_parameter_names_share_a_template() {
        let mut paths = Paths::default();
        assert!(paths.add(Server::Api, "/runs/:run_id", "GET", json!({})));
        assert!(paths.add(Server::Api, "/runs/:id", "PATCH", json!({})));
        assert!(!paths.add(Server::Api, "/runs/:id", "GET", json!({})));
        let (value, count) = paths.into_value();
        assert_eq!(count, 2);
        let item = &value["/runs/{run_id}"];
        assert_eq!(item["patch"]["parameters"][0]["name"], "run_id");
    }

    #[test]
    fn templates_give_schemas_and_examples() {
        let t: Value = serde_json::from_str(
            r#"{"data":{"type":"workspaces","attributes":{"name":"{{prefix}}-{{unique}}","auto-apply":false}}}"#,
        )
        .unwrap();
        let s = infer_schema(&t);
        assert_eq!(
            s["properties"]["data"]["properties"]["type"]["const"],
            "workspaces"
        );
        assert_eq!(
            s["properties"]["data"]["properties"]["attributes"]["properties"]["auto-apply"]["type"],
            "boolean"
        );
        assert_eq!(
            fill_example(&t)["data"]["attributes"]["name"],
            "example-example"
        );
    }

    #[test]
    fn the_embedded_catalog_gives_both_path_forms() {
        let doc = load(None, None).unwrap();
        assert_eq!(doc["openapi"], OPENAPI_VERSION);
        assert!(doc["paths"]["/organizations"]["post"].is_object());
        assert!(doc["paths"]["/api/v2/organizations"]["post"].is_object());
        assert!(
            doc["paths"]["/organizations/{organization_name}/workspaces"]["post"]["requestBody"]
                .is_object()
        );
        assert!(doc["components"]["schemas"]["envelope.single"].is_object());
        let link =
            &doc["paths"]["/api/v2/organizations"]["post"]["responses"]["201"]["links"]["show"];
        assert_eq!(link["operationId"], "organizations.show.api-v2");
        assert_eq!(
            link["parameters"]["organization_name"],
            "$response.body#/data/id"
        );
    }
}
