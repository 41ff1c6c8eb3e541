//! The in-memory store: plain Rust tables, no axum.
//!
//! Every resource is a [`Record`]: a JSON:API type, an id, an owner (the id of the resource it
//! belongs to, for lists and cascading deletes) and its attributes and relationships as JSON.
//! Uploaded objects are kept apart, keyed by their object id.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::shapes::{Shape, Shapes};

/// One stored resource.
#[derive(Debug, Clone)]
pub struct Record {
    /// The id (`ws-…`, or the name for organizations).
    pub id: String,
    /// The JSON:API type.
    pub kind: &'static str,
    /// Creation order; lists are sorted by it.
    pub seq: u64,
    /// The id of the owning resource, if any.
    pub owner: Option<String>,
    /// Kebab-case attributes.
    pub attributes: Map<String, Value>,
    /// Relationships, each `{"data": …}`.
    pub relationships: Map<String, Value>,
}

impl Record {
    /// A string attribute, or "".
    pub fn str(&self, name: &str) -> &str {
        self.attributes
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// A boolean attribute, or false.
    pub fn flag(&self, name: &str) -> bool {
        self.attributes
            .get(name)
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// The id of a to-one relationship.
    pub fn rel_id(&self, name: &str) -> Option<&str> {
        self.relationships
            .get(name)
            .and_then(|r| r.get("data"))
            .and_then(|d| d.get("id"))
            .and_then(Value::as_str)
    }

    /// Sets a to-one relationship.
    pub fn set_rel(&mut self, name: &str, kind: &str, id: &str) {
        self.relationships.insert(
            name.to_string(),
            json!({ "data": { "type": kind, "id": id } }),
        );
    }

    /// The ids of a to-many relationship.
    pub fn rel_ids(&self, name: &str) -> Vec<String> {
        self.relationships
            .get(name)
            .and_then(|r| r.get("data"))
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| i.get("id").and_then(Value::as_str).map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Replaces a to-many relationship.
    pub fn set_rel_ids(&mut self, name: &str, kind: &str, ids: &[String]) {
        let data: Vec<Value> = ids
            .iter()
            .map(|id| json!({ "type": kind, "id": id }))
            .collect();
        self.relationships
            .insert(name.to_string(), json!({ "data": data }));
    }

    /// The JSON:API resource object.
    pub fn render(&self) -> Value {
        json!({
            "id": self.id,
            "type": self.kind,
            "attributes": self.attributes,
            "relationships": self.relationships,
            "links": { "self": format!("/api/v2/{}/{}", self.kind, self.id) },
        })
    }
}

/// What an uploaded object belongs to.
#[derive(Debug, Clone)]
pub struct Object {
    /// The record (a `cv-`, `polsetver-`, `modver-` or `sv-` id) the upload completes.
    pub target: String,
    /// The JSON:API type of the target.
    pub kind: &'static str,
    /// The bytes, once uploaded.
    pub bytes: Option<Vec<u8>>,
}

/// The whole state of the reference.
#[derive(Debug, Clone)]
pub struct Store {
    records: HashMap<(&'static str, String), Record>,
    /// Upload and download objects by object id.
    pub objects: HashMap<String, Object>,
    /// Extra tokens that authenticate like the user token, each with its owner: the
    /// organization's name (organization tokens) or the token's id (team and user tokens).
    pub tokens: BTreeMap<String, String>,
    /// The user behind the user token.
    pub current_user: String,
    /// The user an administrator impersonates.
    pub impersonating: Option<String>,
    /// The account password.
    pub password: String,
    /// Admin settings by id.
    pub settings: BTreeMap<String, Map<String, Value>>,
    /// Seeded external things: (kind, id).
    pub seeded: Vec<(String, String)>,
    /// Whether a runner plans runs (false under the `no-runner` shape: runs stay `pending`).
    pub runner: bool,
    /// TFE's words and strictness where the spec and TFE disagree (`Compat::Tfe`).
    pub tfe: bool,
    /// Under the `numeric-ids` shape, the next number [`Store::new_id`] issues.
    next_number: Option<u64>,
    /// Under `numeric-ids`, the numbers given to fixed, non-numeric ids in answers.
    aliases: BTreeMap<String, u64>,
    seq: u64,
    rng: u64,
}

/// The official engine versions an installation starts with: TFE lists Terraform's releases as
/// official versions, which cannot be deleted (tfe-api-facts 5). Their binaries are named at the
/// releases site's paths; the reference downloads nothing, so each sha is a placeholder.
const OFFICIAL_ENGINE_VERSIONS: &[&str] = &["1.0.4", "1.5.7", "1.9.8"];

/// Final run states: no action applies any more.
pub const FINAL_RUN_STATES: &[&str] = &[
    "applied",
    "discarded",
    "canceled",
    "force_canceled",
    "cancelled",
    "errored",
    "planned_and_finished",
];

impl Store {
    /// A store with the seeded user, VCS installation, assessment result and settings, shaped
    /// by the store-level shapes (`numeric-ids`, `no-runner`; the seeds of the others are
    /// `app::seed`'s).
    pub fn new(password: &str, shapes: &Shapes) -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9e37_79b9_7f4a_7c15);
        let mut store = Store {
            records: HashMap::new(),
            objects: HashMap::new(),
            tokens: BTreeMap::new(),
            current_user: String::new(),
            impersonating: None,
            password: password.to_string(),
            settings: BTreeMap::new(),
            seeded: Vec::new(),
            runner: !shapes.has(Shape::NoRunner),
            tfe: false,
            next_number: shapes.has(Shape::NumericIds).then_some(1),
            aliases: BTreeMap::new(),
            seq: 0,
            rng: nanos | 1,
        };
        let user = store.new_user("reference-user", "user@reference.test");
        if let Some(u) = store.get_mut("users", &user) {
            u.attributes.insert("is-admin".into(), json!(true));
            u.attributes.insert("is-site-admin".into(), json!(true));
        }
        store.current_user = user;
        let installation = store.new_id("ghain-");
        let mut attrs = Map::new();
        attrs.insert("name".into(), json!("reference-installation"));
        attrs.insert("installation-id".into(), json!(1_000_001));
        attrs.insert("installation-type".into(), json!("Organization"));
        attrs.insert(
            "installation-url".into(),
            json!("https://github.com/apps/reference"),
        );
        store.insert_with_id(
            "github-app-installations",
            installation.clone(),
            None,
            attrs,
            Map::new(),
        );
        store
            .seeded
            .push(("vcs_installation".into(), installation.clone()));
        let assessment = store.new_id("asmtres-");
        let mut attrs = Map::new();
        attrs.insert("drifted".into(), json!(false));
        attrs.insert("succeeded".into(), json!(true));
        attrs.insert("error-msg".into(), Value::Null);
        attrs.insert("created-at".into(), json!(now()));
        store.insert_with_id(
            "assessment-results",
            assessment.clone(),
            None,
            attrs,
            Map::new(),
        );
        store.seeded.push(("assessment_result".into(), assessment));
        for (id, extra) in [
            (
                "general",
                json!({"limit-user-organization-creation": true, "api-rate-limiting-enabled": true, "api-rate-limit": 30, "default-remote-state-access": true, "apply-timeout": "24h", "plan-timeout": "2h"}),
            ),
            (
                "cost-estimation",
                json!({"enabled": false, "aws-enabled": false, "gcp-enabled": false, "azure-enabled": false}),
            ),
            (
                "saml",
                json!({"enabled": false, "debug": false, "idp-cert": null, "old-idp-cert": "-----BEGIN CERTIFICATE-----old", "slo-endpoint-url": null, "sso-endpoint-url": null, "signature-signing-method": "SHA256", "signature-digest-method": "SHA256"}),
            ),
            (
                "smtp",
                json!({"enabled": false, "host": null, "port": 25, "sender": null, "auth": "none", "username": null}),
            ),
            (
                "twilio",
                json!({"enabled": false, "account-sid": null, "from-number": null}),
            ),
            (
                "customization",
                json!({"support-email-address": "support@reference.test", "login-help": "", "footer": "", "error": "", "new-user": ""}),
            ),
        ] {
            let attrs = extra.as_object().cloned().unwrap_or_default();
            store.settings.insert(id.to_string(), attrs);
        }
        store.seed_engine_versions();
        store
    }

    /// The official engine versions an installation starts with, each with its linux/amd64
    /// archive.
    fn seed_engine_versions(&mut self) {
        for version in OFFICIAL_ENGINE_VERSIONS {
            let url = format!(
                "https://releases.hashicorp.com/terraform/{version}/terraform_{version}_linux_amd64.zip"
            );
            let sha = "0".repeat(64);
            let attrs = json!({"version": version, "url": url, "sha": sha, "official": true,
                "enabled": true, "beta": false, "deprecated": false, "deprecated-reason": null,
                "usage": 0, "created-at": now(),
                "archs": [{"url": url, "sha": sha, "os": "linux", "arch": "amd64"}]});
            let attrs = attrs.as_object().cloned().unwrap_or_default();
            self.insert("terraform-versions", "tfv-", None, attrs, Map::new());
        }
    }

    /// A new resource id: the prefix plus 16 random characters, or under the `numeric-ids`
    /// shape the next number of one counter shared by every kind (so ids stay unique across
    /// kinds, as the store's owners and objects need).
    pub fn new_id(&mut self, prefix: &str) -> String {
        match self.next_number.as_mut() {
            Some(n) => {
                let id = n.to_string();
                *n += 1;
                id
            }
            None => self.random(prefix),
        }
    }

    /// Under `numeric-ids`, the number standing for a fixed id that the store did not issue
    /// (the same number every time; a new one comes from the [`Store::new_id`] counter).
    pub fn alias(&mut self, id: &str) -> u64 {
        if let Some(n) = self.aliases.get(id) {
            return *n;
        }
        let n = self.next_number.unwrap_or(1);
        self.next_number = Some(n + 1);
        self.aliases.insert(id.to_string(), n);
        n
    }

    /// The id a number stands for: the fixed id it aliases, or the number as a string.
    pub fn unalias(&self, n: u64) -> String {
        self.aliases
            .iter()
            .find(|(_, v)| **v == n)
            .map(|(k, _)| k.clone())
            .unwrap_or_else(|| n.to_string())
    }

    /// A random string that is no resource id (secrets, object ids, version ids): the prefix
    /// plus 16 random characters, whatever the shapes.
    pub fn random(&mut self, prefix: &str) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789";
        let mut id = String::from(prefix);
        for _ in 0..16 {
            // xorshift64*: good enough for unguessable-looking ids in a test server.
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            let n = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33;
            id.push(ALPHABET[(n % ALPHABET.len() as u64) as usize] as char);
        }
        id
    }

    /// Inserts a record with a new id made from `prefix`.
    pub fn insert(
        &mut self,
        kind: &'static str,
        prefix: &str,
        owner: Option<&str>,
        attributes: Map<String, Value>,
        relationships: Map<String, Value>,
    ) -> String {
        let id = self.new_id(prefix);
        self.insert_with_id(
            kind,
            id.clone(),
            owner.map(String::from),
            attributes,
            relationships,
        );
        id
    }

    /// Inserts (or replaces) a record with a given id.
    pub fn insert_with_id(
        &mut self,
        kind: &'static str,
        id: String,
        owner: Option<String>,
        attributes: Map<String, Value>,
        relationships: Map<String, Value>,
    ) {
        self.seq += 1;
        let record = Record {
            id: id.clone(),
            kind,
            seq: self.seq,
            owner,
            attributes,
            relationships,
        };
        self.records.insert((kind, id), record);
    }

    /// One record.
    pub fn get(&self, kind: &'static str, id: &str) -> Option<&Record> {
        self.records.get(&(kind, id.to_string()))
    }

    /// One record, or a 404 naming it.
    pub fn find(&self, kind: &'static str, id: &str) -> ApiResult<&Record> {
        self.get(kind, id)
            .ok_or_else(|| ApiError::not_found(singular(kind), id))
    }

    /// One record for change.
    pub fn get_mut(&mut self, kind: &'static str, id: &str) -> Option<&mut Record> {
        self.records.get_mut(&(kind, id.to_string()))
    }

    /// One record for change, or a 404.
    pub fn find_mut(&mut self, kind: &'static str, id: &str) -> ApiResult<&mut Record> {
        self.get_mut(kind, id)
            .ok_or_else(|| ApiError::not_found(singular(kind), id))
    }

    /// All records of a kind, oldest first, optionally only those of one owner.
    pub fn list(&self, kind: &'static str, owner: Option<&str>) -> Vec<&Record> {
        let mut out: Vec<&Record> = self
            .records
            .values()
            .filter(|r| r.kind == kind && owner.is_none_or(|o| r.owner.as_deref() == Some(o)))
            .collect();
        out.sort_by_key(|r| r.seq);
        out
    }

    /// Removes a record and, recursively, every record it owns. Answers whether it existed.
    pub fn remove(&mut self, kind: &'static str, id: &str) -> bool {
        if self.records.remove(&(kind, id.to_string())).is_none() {
            return false;
        }
        let owned: Vec<(&'static str, String)> = self
            .records
            .values()
            .filter(|r| r.owner.as_deref() == Some(id))
            .map(|r| (r.kind, r.id.clone()))
            .collect();
        for (k, i) in owned {
            self.remove(k, &i);
        }
        self.objects.retain(|_, o| o.target != id);
        // A removed token's secret stops authenticating (team and user tokens).
        self.tokens.retain(|_, owner| owner != id);
        true
    }

    /// Removes a record or answers 404.
    pub fn delete(&mut self, kind: &'static str, id: &str) -> ApiResult<()> {
        if self.remove(kind, id) {
            Ok(())
        } else {
            Err(ApiError::not_found(singular(kind), id))
        }
    }

    /// Gives a record a new id (an organization rename), moving what it owns along.
    pub fn rekey(&mut self, kind: &'static str, old: &str, new: &str) {
        let Some(mut record) = self.records.remove(&(kind, old.to_string())) else {
            return;
        };
        record.id = new.to_string();
        self.records.insert((kind, new.to_string()), record);
        for r in self.records.values_mut() {
            if r.owner.as_deref() == Some(old) {
                r.owner = Some(new.to_string());
            }
        }
    }

    /// Creates a user (type `users`) and answers its id.
    pub fn new_user(&mut self, username: &str, email: &str) -> String {
        let mut attrs = Map::new();
        attrs.insert("username".into(), json!(username));
        attrs.insert("email".into(), json!(email));
        attrs.insert(
            "avatar-url".into(),
            json!("https://www.gravatar.com/avatar/0"),
        );
        attrs.insert("is-admin".into(), json!(false));
        attrs.insert("is-site-admin".into(), json!(false));
        attrs.insert("is-suspended".into(), json!(false));
        attrs.insert("is-service-account".into(), json!(false));
        attrs.insert(
            "two-factor".into(),
            json!({"enabled": true, "verified": true}),
        );
        attrs.insert("created-at".into(), json!(now()));
        attrs.insert(
            "permissions".into(),
            json!({"can-create-organizations": true, "can-change-email": true, "can-change-username": true}),
        );
        self.insert("users", "user-", None, attrs, Map::new())
    }

    /// Registers an upload object for a record and answers the object id.
    pub fn new_object(&mut self, kind: &'static str, target: &str) -> String {
        let id = self.random("obj-");
        self.objects.insert(
            id.clone(),
            Object {
                target: target.to_string(),
                kind,
                bytes: None,
            },
        );
        id
    }

    /// The bytes uploaded for a record, if any.
    pub fn uploaded_bytes(&self, target: &str) -> Option<&[u8]> {
        self.objects
            .values()
            .find(|o| o.target == target && o.bytes.is_some())
            .and_then(|o| o.bytes.as_deref())
    }
}

/// A readable singular name of a JSON:API type, for error details.
pub fn singular(kind: &str) -> &str {
    kind.strip_suffix('s').unwrap_or(kind)
}

/// The current time as ISO-8601 (`2024-01-02T03:04:05.000Z`).
pub fn now() -> String {
    iso(time::OffsetDateTime::now_utc())
}

/// A time as ISO-8601 with milliseconds (`2024-01-02T03:04:05.000Z`).
pub fn iso(t: time::OffsetDateTime) -> String {
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

/// What the `generic-store` shape keeps (`gate::pretend` answers with it): documents by id,
/// each with the collection it was posted to. Here, beside the store, so that the state
/// (`state::AppState`) holds it without knowing the gate.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    issued: AtomicU64,
    /// The documents by id, each with the collection it was posted to.
    pub(crate) documents: Mutex<BTreeMap<String, (String, Value)>>,
}

impl Kept {
    /// A fresh id for a resource of `kind`.
    pub(crate) fn issue(&self, kind: &str) -> String {
        let n = self.issued.fetch_add(1, Ordering::Relaxed) + 1;
        let stem: String = kind
            .chars()
            .filter(char::is_ascii_alphabetic)
            .take(4)
            .collect();
        format!("{stem}-{n:012}")
    }
}
