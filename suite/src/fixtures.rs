//! The resource graph at run time: every path parameter filled with a real id.
//!
//! Shared fixtures are made once per run, lazily, by the first test that needs them; a test
//! that destroys or changes a resource lists its kind as `fresh` and gets its own instance
//! (and so do the kinds below it). Everything made is written to the run's ledger and
//! deleted at the end in reverse order.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use reqwest::Method;
use serde_json::Value;
use tokio::sync::OnceCell;

use crate::catalog::{Catalog, Endpoint, ResourceDef, Route};
use crate::checks::upload_candidates;
use crate::ledger::{Ledger, Made};

use crate::removal::{Removed, Remover};
use crate::target::{Auth, Body, Exchange, Request, Target};

/// A resource that exists on the target, with the fields tests read from it.
#[derive(Debug, Clone)]
pub struct Instance {
    /// Its kind (`workspace`, ...).
    pub kind: String,
    /// Its id.
    pub id: String,
    /// Named fields (`id`, `name`, ...).
    pub fields: BTreeMap<String, String>,
    /// The document it came from (the create answer, or a list item).
    pub document: Value,
    /// Made fresh for one test.
    pub fresh: bool,
}

/// Why a fixture could not be had.
#[derive(Debug, Clone)]
pub enum FixtureError {
    /// The target cannot give it and no `--fixture` names one: the test is skipped.
    Unavailable(String),
    /// Making it failed: the request and answer say why.
    Failed {
        /// The kind being made.
        kind: String,
        /// What went wrong.
        message: String,
        /// The exchange that failed, if one was sent.
        exchange: Option<Box<Exchange>>,
    },
    /// The catalog does not say how to fill a parameter (a harness error).
    Catalog(String),
}

impl std::fmt::Display for FixtureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FixtureError::Unavailable(why) => f.write_str(why),
            FixtureError::Failed { kind, message, .. } => {
                write!(f, "could not make the `{kind}` fixture: {message}")
            }
            FixtureError::Catalog(why) => write!(f, "catalog: {why}"),
        }
    }
}

/// The instances one test works with, by kind.
#[derive(Debug, Default, Clone)]
pub struct Scope {
    instances: HashMap<String, Arc<Instance>>,
}

impl Scope {
    /// The instance of `kind`, if resolved.
    pub fn get(&self, kind: &str) -> Option<&Arc<Instance>> {
        self.instances.get(kind)
    }

    /// Puts (or replaces) an instance.
    pub fn insert(&mut self, instance: Arc<Instance>) {
        self.instances.insert(instance.kind.clone(), instance);
    }
}

/// What made resources live in, and which are known gone.
#[derive(Debug, Default)]
struct Lineage {
    parents: HashMap<(String, String), Vec<(String, String)>>,
    gone: std::collections::HashSet<(String, String)>,
}

/// Where a path parameter's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamSource {
    /// A fixed value.
    Literal(String),
    /// A field of a fixture.
    Field(String, String),
}

type Cell = Arc<OnceCell<Result<Arc<Instance>, FixtureError>>>;

/// The run's fixtures.
pub struct Fixtures {
    target: Arc<Target>,
    catalog: Arc<Catalog>,
    prefix: String,
    given: BTreeMap<String, String>,
    /// Fields of given instances beyond `id` and `name` (`--module`).
    given_fields: BTreeMap<String, BTreeMap<String, String>>,
    counter: AtomicU64,
    shared: Mutex<HashMap<String, Cell>>,
    ledger: Mutex<Vec<Made>>,
    /// What each made resource lives in, by (kind, id), and what is known gone: a child
    /// whose parent is gone went with it.
    lineage: Mutex<Lineage>,
    journal: Option<Arc<Ledger>>,
    read_only: bool,
}

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

impl Fixtures {
    /// Fixtures for one run: names start with `prefix`; `given` are `--fixture kind=id`.
    pub fn new(
        target: Arc<Target>,
        catalog: Arc<Catalog>,
        prefix: String,
        given: BTreeMap<String, String>,
    ) -> Self {
        Self {
            target,
            catalog,
            prefix,
            given,
            given_fields: BTreeMap::new(),
            counter: AtomicU64::new(0),
            shared: Mutex::new(HashMap::new()),
            ledger: Mutex::new(Vec::new()),
            lineage: Mutex::new(Lineage::default()),
            journal: None,
            read_only: false,
        }
    }

    /// Writes every resource made to this crash-safe ledger as well (see [`crate::ledger`]).
    pub fn with_ledger(mut self, ledger: Arc<Ledger>) -> Self {
        self.journal = Some(ledger);
        self
    }

    /// `--read-only`: nothing is created; kinds that must be made are unavailable.
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// `--module NS/NAME/PROVIDER/VERSION`: the registry read tests use this published module
    /// (the `published_module` kind, with the fields `namespace`, `name`, `provider` and
    /// `version`) instead of publishing one. Other kinds (the management API's
    /// `registry_module`) are not affected.
    pub fn give_module(mut self, module: Option<&crate::settings::PublishedModule>) -> Self {
        if let Some(m) = module {
            let kind = "published_module".to_string();
            self.given.insert(kind.clone(), m.to_string());
            let fields = [
                ("namespace", &m.namespace),
                ("name", &m.name),
                ("provider", &m.provider),
                ("version", &m.version),
            ];
            self.given_fields.insert(
                kind,
                fields
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect(),
            );
        }
        self
    }

    /// Tells the blast-radius guard that an instance (its id, name and other fields) is this
    /// run's own.
    fn vouch(&self, instance: &Instance) {
        let guard = self.target.guard();
        guard.allow(&instance.id);
        for value in instance.fields.values() {
            if !value.contains('/') {
                guard.allow(value);
            }
        }
    }

    /// The run's name prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Everything made so far, oldest first.
    pub fn made(&self) -> Vec<Made> {
        self.ledger.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Where parameter `param` of a path of `endpoint` (if any) comes from.
    pub fn param_source(
        &self,
        param: &str,
        endpoint: Option<&Endpoint>,
        own_kind: Option<&str>,
    ) -> Result<ParamSource, FixtureError> {
        let spec = endpoint.and_then(|e| e.params.get(param)).or_else(|| {
            if param == "id" {
                None
            } else {
                self.catalog.graph.params.get(param)
            }
        });
        if let Some(spec) = spec {
            return Ok(parse_param(spec));
        }
        let kind = endpoint.and_then(|e| e.resource.as_deref()).or(own_kind);
        match kind {
            Some(kind) => Ok(ParamSource::Field(kind.to_string(), "id".to_string())),
            None => Err(FixtureError::Catalog(format!(
                "no mapping for path parameter `:{param}`"
            ))),
        }
    }

    /// The kinds a path template and some texts refer to.
    pub fn kinds_in(
        &self,
        path: &str,
        texts: &[&str],
        endpoint: Option<&Endpoint>,
        own_kind: Option<&str>,
    ) -> Result<Vec<String>, FixtureError> {
        let mut kinds = Vec::new();
        for param in path_params(path) {
            if let ParamSource::Field(kind, _) = self.param_source(param, endpoint, own_kind)? {
                kinds.push(kind);
            }
        }
        for text in texts {
            kinds.extend(placeholder_kinds(text));
        }
        kinds.dedup();
        Ok(kinds)
    }

    /// Fills `:params` of a path template from the scope.
    pub fn fill_path(
        &self,
        path: &str,
        scope: &Scope,
        endpoint: Option<&Endpoint>,
        own_kind: Option<&str>,
    ) -> Result<String, FixtureError> {
        let mut out = String::new();
        for (i, segment) in path.split('/').enumerate() {
            if i > 0 {
                out.push('/');
            }
            match segment.strip_prefix(':') {
                Some(param) => {
                    let value = match self.param_source(param, endpoint, own_kind)? {
                        ParamSource::Literal(v) => v,
                        ParamSource::Field(kind, field) => field_of(scope, &kind, &field)?,
                    };
                    out.push_str(&encode_segment(&value));
                }
                None => out.push_str(segment),
            }
        }
        Ok(out)
    }

    /// Fills `{{prefix}}`, `{{unique}}` and `{{kind.field}}` in a text.
    pub fn fill_text(&self, text: &str, scope: &Scope) -> Result<String, FixtureError> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after.find("}}").ok_or_else(|| {
                FixtureError::Catalog(format!("unclosed placeholder in `{text}`"))
            })?;
            let name = after[..end].trim();
            let value = match name {
                "prefix" => self.prefix.clone(),
                // a destination the target may call: the user's, else a name that never
                // resolves (`.invalid`), so that no third party is ever called
                "notification_url" => self
                    .given
                    .get("notification_url")
                    .cloned()
                    .unwrap_or_else(|| "https://notifications.invalid/".into()),
                "unique" => format!("{:04}", self.counter.fetch_add(1, Ordering::Relaxed)),
                _ => match name.split_once('.') {
                    Some((kind, field)) => field_of(scope, kind, field)?,
                    None => {
                        return Err(FixtureError::Catalog(format!(
                            "unknown placeholder `{{{{{name}}}}}`"
                        )))
                    }
                },
            };
            out.push_str(&value);
            rest = &after[end + 2..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// Fills a payload template and parses it.
    pub fn payload(&self, name: &str, scope: &Scope) -> Result<Value, FixtureError> {
        let template = self
            .catalog
            .payload(name)
            .ok_or_else(|| FixtureError::Catalog(format!("payload `{name}` not found")))?;
        let text = self.fill_text(template, scope)?;
        serde_json::from_str(&text).map_err(|e| {
            FixtureError::Catalog(format!("payload `{name}` after filling is not JSON: {e}"))
        })
    }

    /// Resolves `kinds` into the scope. Kinds in `fresh`, and kinds below a fresh one, are
    /// made new; the rest are the run's shared instances.
    pub async fn resolve_all(
        &self,
        kinds: &[String],
        fresh: &BTreeSet<String>,
        scope: &mut Scope,
    ) -> Result<(), FixtureError> {
        for kind in kinds {
            self.resolve(kind.clone(), fresh, scope, false).await?;
        }
        Ok(())
    }

    /// Widens a set of fresh kinds: a kind that is found or read rather than created can be
    /// had anew only through fresh parents, so those join the set.
    pub fn expand_fresh(&self, fresh: &mut BTreeSet<String>) {
        let mut pending: Vec<String> = fresh.iter().cloned().collect();
        while let Some(kind) = pending.pop() {
            let Ok(def) = self.def(&kind) else { continue };
            if def.create.is_some() {
                continue;
            }
            for dep in self.deps(&kind, &def).unwrap_or_default() {
                if fresh.insert(dep.clone()) {
                    pending.push(dep);
                }
            }
        }
    }

    /// True when instances of `kind` are made by a create request (also when one is given:
    /// a given resource is read-only, so a test that changes one gets its own).
    pub fn is_creatable(&self, kind: &str) -> bool {
        self.def(kind)
            .is_ok_and(|d| d.create.is_some() || d.from.is_some() || d.find.is_some())
    }

    /// True when the user gave the run's instance of `kind` (`--fixture`, `--organization`).
    pub fn is_given(&self, kind: &str) -> bool {
        self.given.contains_key(kind)
    }

    /// Makes a new instance of `kind` for one test (parents from the scope or shared),
    /// without its `after` steps when `bare` (e.g. a version not yet uploaded).
    pub async fn make_fresh(
        &self,
        kind: &str,
        fresh: &BTreeSet<String>,
        scope: &mut Scope,
        bare: bool,
    ) -> Result<Arc<Instance>, FixtureError> {
        let mut fresh = fresh.clone();
        fresh.insert(kind.to_string());
        self.expand_fresh(&mut fresh);
        scope.instances.remove(kind);
        self.resolve(kind.to_string(), &fresh, scope, bare).await
    }

    fn resolve<'a>(
        &'a self,
        kind: String,
        fresh: &'a BTreeSet<String>,
        scope: &'a mut Scope,
        bare: bool,
    ) -> BoxFuture<'a, Result<Arc<Instance>, FixtureError>> {
        Box::pin(async move {
            if let Some(found) = scope.get(&kind) {
                return Ok(found.clone());
            }
            let def = self.def(&kind)?;
            // A given resource is read-only: a test that must change one makes its own.
            let own = fresh.contains(&kind) && def.create.is_some();
            if let Some(id) = self.given.get(&kind).filter(|_| !own) {
                // read once per run, shared by every test
                let cell = {
                    let mut shared = self
                        .shared
                        .lock()
                        .map_err(|_| FixtureError::Catalog("fixture lock poisoned".into()))?;
                    shared.entry(format!("given:{kind}")).or_default().clone()
                };
                let instance = cell
                    .get_or_init(|| async {
                        let mut instance = given_instance(&kind, id);
                        instance.document = self.read_given(&instance).await;
                        if let Some(fields) = self.given_fields.get(&kind) {
                            instance.fields.extend(fields.clone());
                        }
                        Ok(Arc::new(instance))
                    })
                    .await
                    .clone()?;
                scope.insert(instance.clone());
                return Ok(instance);
            }
            for dep in self.deps(&kind, &def)? {
                if dep != kind {
                    self.resolve(dep, fresh, scope, false).await?;
                }
            }
            let below_fresh = self
                .deps(&kind, &def)?
                .iter()
                .any(|d| scope.get(d).is_some_and(|i| i.fresh));
            let instance = if fresh.contains(&kind) || below_fresh || bare {
                Arc::new(self.make(&kind, &def, scope, true, bare).await?)
            } else {
                let cell = {
                    let mut shared = self
                        .shared
                        .lock()
                        .map_err(|_| FixtureError::Catalog("fixture lock poisoned".into()))?;
                    shared.entry(kind.clone()).or_default().clone()
                };
                let snapshot = scope.clone();
                cell.get_or_init(|| async move {
                    self.make(&kind, &def, &snapshot, false, false)
                        .await
                        .map(Arc::new)
                })
                .await
                .clone()?
            };
            scope.insert(instance.clone());
            Ok(instance)
        })
    }

    /// The document of a given resource, read with its show (a GET: given resources are
    /// read-only), so that what is derived from it (an organization's default project) can
    /// be had; `Null` when it has no show or the show fails.
    async fn read_given(&self, instance: &Instance) -> Value {
        let Some((_, show)) = self.catalog.show_of(&instance.kind) else {
            return Value::Null;
        };
        let mut scope = Scope::default();
        scope.insert(Arc::new(instance.clone()));
        let template = crate::catalog::path_for(&show.path, crate::catalog::Variant::Bare);
        let Ok(path) = self.fill_path(&template, &scope, Some(show), None) else {
            return Value::Null;
        };
        let url = self.target.api_url(&path);
        let ex = self
            .target
            .send(Request::new(Method::GET, url, auth_for(&path)))
            .await;
        match ex.json() {
            Ok(doc) if ex.is_success() => doc,
            _ => Value::Null,
        }
    }

    fn def(&self, kind: &str) -> Result<ResourceDef, FixtureError> {
        let def = self
            .catalog
            .graph
            .resources
            .get(kind)
            .ok_or_else(|| FixtureError::Catalog(format!("unknown resource kind `{kind}`")))?;
        match &def.same_as {
            Some(other) => {
                let mut base = self.def(other)?;
                base.parents.extend(def.parents.iter().cloned());
                Ok(base)
            }
            None => Ok(def.clone()),
        }
    }

    fn deps(&self, kind: &str, def: &ResourceDef) -> Result<Vec<String>, FixtureError> {
        let mut deps: Vec<String> = def.parents.clone();
        if let Some(from) = &def.from {
            deps.push(from.resource.clone());
        }
        let mut routes: Vec<&Route> = def.create.iter().collect();
        routes.extend(def.before.iter());
        routes.extend(def.after.iter());
        for route in routes {
            let payload = route
                .payload
                .as_deref()
                .and_then(|p| self.catalog.payload(p))
                .unwrap_or("");
            deps.extend(self.kinds_in(&route.path, &[payload], None, Some(kind))?);
        }
        if let Some(find) = &def.find {
            deps.extend(self.kinds_in(
                &find.path,
                &[find.equals.as_deref().unwrap_or("")],
                None,
                Some(kind),
            )?);
        }
        deps.retain(|d| d != kind);
        let mut seen = BTreeSet::new();
        deps.retain(|d| seen.insert(d.clone()));
        Ok(deps)
    }

    async fn make(
        &self,
        kind: &str,
        def: &ResourceDef,
        scope: &Scope,
        fresh: bool,
        bare: bool,
    ) -> Result<Instance, FixtureError> {
        let failed = |message: String, exchange: Option<Exchange>| FixtureError::Failed {
            kind: kind.to_string(),
            message,
            exchange: exchange.map(Box::new),
        };
        if def.fixture {
            return Err(FixtureError::Unavailable(format!(
                "needs a `{kind}`, which the API cannot create: give one with --fixture {kind}=ID"
            )));
        }
        if let Some(from) = &def.from {
            let parent = scope.get(&from.resource).ok_or_else(|| {
                FixtureError::Catalog(format!("`{kind}` needs `{}`", from.resource))
            })?;
            let id = value_string(parent.document.pointer(&from.pointer)).ok_or_else(|| {
                failed(
                    format!(
                        "the `{}` document has no id at {}",
                        from.resource, from.pointer
                    ),
                    None,
                )
            })?;
            let mut made = instance(kind, id, &parent.document, def, fresh);
            // A kind read from another one also carries its parents' fields it lacks (the
            // published module: the module's name and provider, its version's version).
            for dep in &def.parents {
                if let Some(p) = scope.get(dep) {
                    for (field, value) in &p.fields {
                        made.fields
                            .entry(field.clone())
                            .or_insert_with(|| value.clone());
                    }
                }
            }
            if self.target.guard().knows(&parent.id) {
                self.vouch(&made);
            }
            return Ok(made);
        }
        if let Some(find) = &def.find {
            let path = self.fill_path(&find.path, scope, None, Some(kind))?;
            let method = Method::from_bytes(find.method.as_bytes()).unwrap_or(Method::GET);
            let ex = self
                .target
                .send(Request::new(
                    method,
                    self.target.api_url(&path),
                    auth_for(&path),
                ))
                .await;
            if !ex.is_success() {
                return Err(failed(format!("listing {path} did not succeed"), Some(ex)));
            }
            let doc = ex.json().map_err(|e| failed(e, Some(ex.clone())))?;
            let wanted = match &find.equals {
                Some(text) => Some(self.fill_text(text, scope)?),
                None => None,
            };
            let items = doc
                .get("data")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let pick = items
                .into_iter()
                .find(|item| match (&find.pointer, &wanted) {
                    (Some(pointer), Some(wanted)) => {
                        value_string(item.pointer(pointer)).as_deref() == Some(wanted.as_str())
                    }
                    _ => true,
                });
            return match pick.and_then(|item| value_string(item.get("id")).map(|id| (id, item))) {
                Some((id, item)) => {
                    let doc = serde_json::json!({ "data": item });
                    let found = instance(kind, id, &doc, def, fresh);
                    // found under resources this run owns: the run's own as well
                    let owners = self.kinds_in(&find.path, &[], None, Some(kind))?;
                    if !owners.is_empty()
                        && owners.iter().all(|k| {
                            scope
                                .get(k)
                                .is_some_and(|i| self.target.guard().knows(&i.id))
                        })
                    {
                        self.vouch(&found);
                    }
                    Ok(found)
                }
                None => Err(FixtureError::Unavailable(format!(
                    "needs a `{kind}`, and {path} lists none: give one with --fixture {kind}=ID"
                ))),
            };
        }
        let create = def.create.as_ref().ok_or_else(|| {
            FixtureError::Catalog(format!("`{kind}` has no create, from, find or fixture"))
        })?;
        if self.read_only {
            return Err(FixtureError::Unavailable(format!(
                "needs a `{kind}`, and --read-only creates nothing: give one with --fixture {kind}=ID"
            )));
        }
        if let Err((message, exchange)) = self.before_create(kind, scope).await {
            return Err(failed(message, exchange));
        }
        let path = self.fill_path(&create.path, scope, None, Some(kind))?;
        let method = Method::from_bytes(create.method.as_bytes()).unwrap_or(Method::POST);
        let mut request = Request::new(method, self.target.api_url(&path), auth_for(&path));
        if let Some(payload) = &create.payload {
            request = request.with_body(Body::Json(self.payload(payload, scope)?));
        }
        let ex = self.target.send(request).await;
        if !ex.is_success() {
            return Err(failed(
                format!("{} {path} did not succeed", create.method),
                Some(ex),
            ));
        }
        let doc = ex.json().map_err(|e| failed(e, Some(ex.clone())))?;
        let id_pointer = def
            .fields
            .get("id")
            .map(String::as_str)
            .unwrap_or("/data/id");
        let id = value_string(doc.pointer(id_pointer)).ok_or_else(|| {
            failed(
                format!("the answer has no id at {id_pointer}"),
                Some(ex.clone()),
            )
        })?;
        let made = instance(kind, id, &doc, def, fresh);
        self.vouch(&made);
        self.record(&made, def, scope);
        if !bare {
            for after in &def.after {
                self.after_step(kind, after, &made, scope).await?;
            }
        }
        Ok(made)
    }

    /// Sends the `before` requests of `kind` (its create's preconditions). A 409 (already in
    /// that state) counts as done. Returns the exchanges sent, or why one failed.
    pub async fn before_create(
        &self,
        kind: &str,
        scope: &Scope,
    ) -> Result<Vec<Exchange>, (String, Option<Exchange>)> {
        let Ok(def) = self.def(kind) else {
            return Ok(Vec::new());
        };
        let mut sent = Vec::new();
        for route in &def.before {
            let path = self
                .fill_path(&route.path, scope, None, Some(kind))
                .map_err(|e| (e.to_string(), None))?;
            let method = Method::from_bytes(route.method.as_bytes()).unwrap_or(Method::POST);
            let mut request = Request::new(method, self.target.api_url(&path), auth_for(&path));
            if let Some(payload) = &route.payload {
                let body = self
                    .payload(payload, scope)
                    .map_err(|e| (e.to_string(), None))?;
                request = request.with_body(Body::Json(body));
            }
            let ex = self.target.send(request).await;
            if !(ex.is_success() || ex.status() == Some(409)) {
                let message = format!(
                    "{} {path}, sent before the create, did not succeed",
                    route.method
                );
                return Err((message, Some(ex)));
            }
            sent.push(ex);
        }
        Ok(sent)
    }

    async fn after_step(
        &self,
        kind: &str,
        route: &Route,
        made: &Instance,
        scope: &Scope,
    ) -> Result<(), FixtureError> {
        let method = Method::from_bytes(route.method.as_bytes()).unwrap_or(Method::POST);
        let request = if route.path.starts_with(crate::catalog::UPLOAD) {
            let Some((_, url)) = upload_candidates(&made.document).into_iter().next() else {
                return Err(FixtureError::Failed {
                    kind: kind.into(),
                    message: "the create answer holds no upload address".into(),
                    exchange: None,
                });
            };
            let url = url::Url::parse(&url).unwrap_or_else(|_| self.target.url(&url));
            Request::new(method, url, Auth::None)
                .with_body(Body::Bytes(crate::tarball::config_tarball()))
        } else {
            let local = self.own_scope(scope, made);
            let path = self.fill_path(&route.path, &local, None, Some(kind))?;
            let mut request = Request::new(method, self.target.api_url(&path), auth_for(&path));
            if let Some(payload) = &route.payload {
                request = request.with_body(Body::Json(self.payload(payload, &local)?));
            }
            request
        };
        let ex = self.target.send(request).await;
        if ex.is_success() {
            Ok(())
        } else {
            Err(FixtureError::Failed {
                kind: kind.into(),
                message: format!("{} after the create did not succeed", route.method),
                exchange: Some(Box::new(ex)),
            })
        }
    }

    fn record(&self, made: &Instance, _def: &ResourceDef, scope: &Scope) {
        for record in self.made_records(&made.kind, made, scope) {
            self.note_made(record);
        }
    }

    /// The scope in which a made instance's own routes (after, delete) are filled: the
    /// instance under its kind and under the kinds it is the `same_as` of, so that a second
    /// organization's delete names that organization, not the shared one.
    fn own_scope(&self, scope: &Scope, made: &Instance) -> Scope {
        let mut local = scope.clone();
        local.insert(Arc::new(made.clone()));
        let mut kind = made.kind.clone();
        for _ in 0..8 {
            let Some(base) = self
                .catalog
                .graph
                .resources
                .get(&kind)
                .and_then(|d| d.same_as.clone())
            else {
                break;
            };
            let mut alias = made.clone();
            alias.kind = base.clone();
            local.insert(Arc::new(alias));
            kind = base;
        }
        local
    }

    /// Adds a resource a test made itself (a create test) to the ledger; with a ledger file,
    /// returns once the entry is on disk.
    pub fn note_made(&self, made: Made) {
        self.target.guard().allow(&made.id);
        if let Ok(mut lineage) = self.lineage.lock() {
            lineage
                .parents
                .insert((made.kind.clone(), made.id.clone()), made.parents.clone());
        }
        if let Some(journal) = &self.journal {
            journal.created(&made);
        }
        if let Ok(mut ledger) = self.ledger.lock() {
            ledger.push(made);
        }
    }

    /// Records that something the run made is gone already (deleted by the test that made
    /// it): teardown skips it and the ledger says so.
    pub fn note_gone(&self, kind: &str, id: &str) {
        if let Ok(mut lineage) = self.lineage.lock() {
            lineage.gone.insert((kind.to_string(), id.to_string()));
        }
        let mut gone = Vec::new();
        if let Ok(mut ledger) = self.ledger.lock() {
            ledger.retain(|m| {
                let hit = m.kind == kind && m.id == id;
                if hit {
                    gone.push(m.clone());
                }
                !hit
            });
        }
        if let Some(journal) = &self.journal {
            journal.all_deleted(&gone);
        }
    }

    /// What teardown needs of an instance the run made, and of what its create brought into
    /// being besides (its kind's `leaves`, first: torn down after it).
    pub fn made_records(&self, kind: &str, made: &Instance, scope: &Scope) -> Vec<Made> {
        let leaves = self.def(kind).map(|def| def.leaves).unwrap_or_default();
        let mut records: Vec<Made> = leaves
            .iter()
            .filter_map(|leaf| {
                let id = value_string(made.document.pointer(&leaf.pointer))?;
                let path = leaf.delete.path.replace(":id", &encode_segment(&id));
                Some(Made {
                    kind: leaf.kind.clone(),
                    id,
                    delete: Some((
                        Method::from_bytes(leaf.delete.method.as_bytes()).ok()?,
                        self.target.api_url(&path),
                        auth_for(&path),
                    )),
                    show: None,
                    parents: Vec::new(),
                })
            })
            .collect();
        records.push(self.made_record(kind, made, scope));
        records
    }

    /// What teardown needs of an instance the run made: the request that deletes it (its
    /// kind's `delete` recipe) and the one that shows it (its kind's show endpoint).
    fn made_record(&self, kind: &str, made: &Instance, scope: &Scope) -> Made {
        let local = self.own_scope(scope, made);
        let delete = self.def(kind).ok().and_then(|def| {
            let route = def.delete.as_ref()?;
            let path = self.fill_path(&route.path, &local, None, Some(kind)).ok()?;
            Some((
                Method::from_bytes(route.method.as_bytes()).ok()?,
                self.target.api_url(&path),
                auth_for(&path),
            ))
        });
        let root = self.target.config.root.path().trim_end_matches('/');
        let show = delete.as_ref().and_then(|(method, url, auth)| {
            let relative = url.path().strip_prefix(root)?;
            let path = self
                .catalog
                .show_path_for(kind, method.as_str(), relative)?;
            Some((self.target.url(&path), *auth))
        });
        let parents = self
            .def(kind)
            .map(|def| def.parents)
            .unwrap_or_default()
            .iter()
            .filter_map(|parent| scope.get(parent))
            .map(|p| (p.kind.clone(), p.id.clone()))
            .collect();
        Made {
            kind: kind.to_string(),
            id: made.id.clone(),
            delete,
            show,
            parents,
        }
    }

    /// A created instance of `kind` built from a create answer (for create tests).
    pub fn instance_from(&self, kind: &str, id: String, document: &Value) -> Instance {
        let def = self.def(kind).unwrap_or_default();
        let made = instance(kind, id, document, &def, true);
        self.vouch(&made);
        made
    }

    /// Deletes everything the run made, newest first, each shown gone before it counts
    /// ([`crate::removal`]). Returns what is not shown gone, with why.
    pub async fn teardown(&self) -> Vec<(Made, String)> {
        let mut remover = Remover::new(&self.target, &self.catalog);
        let mut leftovers = Vec::new();
        let mut unconfirmed = Vec::new();
        for item in self.made().into_iter().rev() {
            let Some(delete) = item.delete.clone() else {
                continue;
            };
            let parent_gone = self.parent_gone(&item);
            match remover
                .remove(&item.kind, &delete, item.show.as_ref(), parent_gone)
                .await
            {
                Removed::Deleted(_) | Removed::Gone => self.journal_gone(&item),
                Removed::Left(why) => leftovers.push((item, why)),
                unsure @ Removed::Unconfirmed(_) => unconfirmed.push((item, unsure)),
            }
        }
        for (item, unsure) in unconfirmed {
            match remover.settle(item.show.as_ref(), unsure) {
                Removed::Left(why) => leftovers.push((item, why)),
                _ => self.journal_gone(&item),
            }
        }
        // what a parent deleted later took along (an organization's modules)
        let mut left = Vec::new();
        for (item, why) in leftovers {
            let went_along = self.parent_gone(&item)
                && match &item.show {
                    Some(show) => remover.gone_now(show).await,
                    None => true,
                };
            if went_along {
                self.journal_gone(&item);
            } else {
                left.push((item, why));
            }
        }
        if let Some(journal) = &self.journal {
            journal.sync();
        }
        left
    }

    /// True when something the item lives in (its parents, theirs, ...) is known gone.
    fn parent_gone(&self, item: &Made) -> bool {
        let Ok(lineage) = self.lineage.lock() else {
            return false;
        };
        let mut next = item.parents.clone();
        for _ in 0..16 {
            if next.iter().any(|p| lineage.gone.contains(p)) {
                return true;
            }
            next = next
                .iter()
                .flat_map(|p| lineage.parents.get(p).cloned().unwrap_or_default())
                .collect();
            if next.is_empty() {
                break;
            }
        }
        false
    }

    fn journal_gone(&self, item: &Made) {
        if let Ok(mut lineage) = self.lineage.lock() {
            lineage.gone.insert((item.kind.clone(), item.id.clone()));
        }
        if let Some(journal) = &self.journal {
            journal.deleted(item);
        }
    }
}

/// The credential a path needs: the admin token under `/admin`.
pub fn auth_for(path: &str) -> Auth {
    let bare = path.strip_prefix("/api/v2").unwrap_or(path);
    if bare.starts_with("/admin/") || bare == "/admin" {
        Auth::Admin
    } else {
        Auth::User
    }
}

fn parse_param(spec: &str) -> ParamSource {
    match spec.strip_prefix('=') {
        Some(literal) => ParamSource::Literal(literal.to_string()),
        None => match spec.split_once('.') {
            Some((kind, field)) => ParamSource::Field(kind.to_string(), field.to_string()),
            None => ParamSource::Field(spec.to_string(), "id".to_string()),
        },
    }
}

/// The `:param` names of a path template.
pub fn path_params(path: &str) -> impl Iterator<Item = &str> {
    path.split('/').filter_map(|s| s.strip_prefix(':'))
}

fn placeholder_kinds(text: &str) -> Vec<String> {
    let mut kinds = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        if let Some((kind, _)) = after[..end].trim().split_once('.') {
            kinds.push(kind.to_string());
        }
        rest = &after[end + 2..];
    }
    kinds
}

fn field_of(scope: &Scope, kind: &str, field: &str) -> Result<String, FixtureError> {
    let instance = scope
        .get(kind)
        .ok_or_else(|| FixtureError::Catalog(format!("`{kind}` is needed but was not resolved")))?;
    instance
        .fields
        .get(field)
        .cloned()
        .ok_or_else(|| FixtureError::Failed {
            kind: kind.to_string(),
            message: format!("the `{kind}` has no field `{field}` in its document"),
            exchange: None,
        })
}

fn given_instance(kind: &str, id: &str) -> Instance {
    let mut fields = BTreeMap::new();
    fields.insert("id".to_string(), id.to_string());
    fields.insert("name".to_string(), id.to_string());
    Instance {
        kind: kind.to_string(),
        id: id.to_string(),
        fields,
        document: Value::Null,
        fresh: false,
    }
}

fn instance(kind: &str, id: String, document: &Value, def: &ResourceDef, fresh: bool) -> Instance {
    let mut fields = BTreeMap::new();
    if let Some(name) = value_string(document.pointer("/data/attributes/name")) {
        fields.insert("name".to_string(), name);
    }
    for (field, pointer) in &def.fields {
        if let Some(v) = value_string(document.pointer(pointer)) {
            fields.insert(field.clone(), v);
        }
    }
    fields.insert("id".to_string(), id.clone());
    Instance {
        kind: kind.to_string(),
        id,
        fields,
        document: document.clone(),
        fresh,
    }
}

/// A JSON string or number as text.
pub fn value_string(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Percent-encodes one path segment.
pub fn encode_segment(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
