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

use crate::catalog::{path_for, BodyKind, Catalog, Endpoint, Kind, Variant};
use crate::catalog::{REGISTRY, UPLOAD};
use crate::checks::Schemas;
use crate::exit::ExitCodes;

mod operations;
mod paths;

use operations::operation;
use paths::{segments, shape, Paths, Segment, Server};

/// The OpenAPI version written.
pub const OPENAPI_VERSION: &str = "3.1.0";
/// The media type of JSON:API documents.
const JSONAPI: &str = "application/vnd.api+json";
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

fn placeholder_endpoint(method: &crate::catalog::HttpMethod, path: &str) -> Endpoint {
    Endpoint {
        id: String::new(),
        method: method.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;

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
