//! Shapes: whole classes of real, partial servers the reference can imitate.
//!
//! A fault breaks one behaviour of a complete service; a shape is a complete, consistent,
//! smaller (or differently built) service, such as one that answers only under `/api/v2`, holds
//! one organization, serves only the module registry, issues numeric ids or has no runner.
//! Several may be combined. What each changes and seeds is in `reference/README.md` ("Shapes").
//!
//! Where each shape acts:
//! - routing (`api-v2-only`, `one-organization`, `registry-only`, `no-admin`, `tfe-paths`): [`Shapes::refuses`], asked
//!   by the gate next to the routing faults;
//! - seeding (`one-organization`, `registry-only`): `app::seed`, when the state is made, from
//!   [`SEEDED_ORGANIZATION`], [`SEEDED_MODULE`] and [`seeded_archive`];
//! - unavailable now and then: the gate's limits (`gate::limits`), before anything else;
//! - opaque organization ids: the gate rewrites them in answers and bodies (`gate::ids`);
//! - numeric ids: the store issues numbers (`Store::new_id`) and the gate turns them into JSON
//!   numbers in answers and back into strings in request bodies (`gate::ids`);
//! - no runner: the store's run lifecycle (`routes::runs`), through `Store::runner`;
//! - TFE's words: the same as [`crate::Compat::Tfe`] (`conform serve --compat tfe`);
//! - stores nothing, generic store: the gate answers every authenticated request itself
//!   (`gate::pretend`), before any route;
//! - eventually consistent (`list-lag`, `delete-202-later`): the gate around the route
//!   (`gate::later`);
//! - cloud block only: routing ([`Shapes::refuses`]) and seeding (`app::seed`: the
//!   organization and [`SEEDED_WORKSPACE`]);
//! - unconfigured: the handlers of twilio verify and of configuration versions
//!   (`routes::admin`, `routes::configs`);
//! - TFE's create statuses: the gate's answer side (`gate::envelope`), through
//!   [`Shapes::created_200`].

use std::fmt;
use std::str::FromStr;

use axum::http::Method;

use crate::paths::{is_bare_api, is_upload_path, RouteSpec};

/// A class of real, partial server the reference imitates (see [`shape_catalog`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// `api-v2-only`: the API answers only under `/api/v2/...`; bare paths answer 404.
    ApiV2Only,
    /// `one-organization`: exactly one organization, `acme`, seeded; organizations cannot be
    /// listed, created, updated or deleted.
    OneOrganization,
    /// `registry-only`: only the module registry read protocol (and its archive) answers; one
    /// module version is seeded.
    RegistryOnly,
    /// `numeric-ids`: every issued id but an organization's is a decimal number.
    NumericIds,
    /// `no-runner`: runs never leave `pending`.
    NoRunner,
    /// `tfe-words`: TFE's words and strictness where the spec and TFE disagree
    /// ([`crate::Compat::Tfe`], `conform serve --compat tfe`).
    TfeWords,
    /// `no-admin`: no administrator API; every `/admin/...` path answers 404.
    NoAdmin,
    /// `opaque-organization-ids`: an organization's id is not its name (`org-` and the hex of
    /// the name); paths take only the name.
    OpaqueOrganizationIds,
    /// `unavailable-now-and-then`: a load balancer in front answers every 40th request 503
    /// with `Retry-After: 1`.
    UnavailableNowAndThen,
    /// `tfe-paths`: engine versions only at TFE's `/admin/terraform-versions`, IP ranges only
    /// at TFE's `/api/meta/ip-ranges`.
    TfePaths,
    /// `stores-nothing`: every route answers plausibly and nothing is stored (a GET of an item
    /// echoes the path's id, lists are empty, writes echo what they were sent).
    StoresNothing,
    /// `generic-store`: a JSON:API document store without the API's meaning (POST keeps,
    /// GET shows and lists, PATCH merges, DELETE forgets; no states, tokens, relationships,
    /// uploads or registry).
    GenericStore,
    /// `tfe-create-200`: the creates TFE documents as answered 200 (a team, a team's
    /// workspace and project access, an agent pool) answer 200, not 201.
    TfeCreate200,
    /// `registry-source-other-host`: a module download's source is on another origin (the same
    /// service under its other loopback name, as an archive store or a CDN would be), where it
    /// is served without the token.
    RegistrySourceOtherHost,
    /// `typed-bodies`: a request document whose `data` object names no `type` is refused 422
    /// (JSON:API requires it; real servers refuse it).
    TypedBodies,
    /// `membership-writes-only`: organization memberships can be created and deleted, but
    /// none of their reads is routed (as on a real server: invites and removals, no list or show).
    MembershipWritesOnly,
    /// `runs-need-configuration`: a run of a workspace without a configuration version is
    /// refused 422 (TFE cannot run without one; a real server answers 404).
    RunsNeedConfiguration,
    /// `list-lag`: a list shows a new item only 1.5 s after its create (a list served from a
    /// search index or a replica).
    ListLag,
    /// `delete-202-later`: a delete of what its path shows answers 202 Accepted and takes
    /// effect 1.5 s later (a delete queued to a worker).
    Delete202Later,
    /// `unconfigured`: a TFE instance as installed: Twilio is not enabled, so its verify is
    /// refused 422; a configuration version uploaded through the API carries no commit
    /// information (a null `ingress-attributes`, whose read answers 404).
    Unconfigured,
    /// `cloud-block-only`: only what terraform's `cloud` block uses (the commonest shape of a
    /// "TFE-compatible" backend): ping, the account, one seeded organization's entitlement set,
    /// one seeded workspace read by name, its lock, state versions (no list), configuration
    /// versions, runs, plans and applies. Every other route answers 404.
    CloudBlockOnly,
}

/// One entry of the shape catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapeInfo {
    /// The name given on the command line (`api-v2-only`).
    pub name: &'static str,
    /// What the shape changes, in one line.
    pub description: &'static str,
}

const ALL: [Shape; 21] = [
    Shape::ApiV2Only,
    Shape::OneOrganization,
    Shape::RegistryOnly,
    Shape::NumericIds,
    Shape::NoRunner,
    Shape::TfeWords,
    Shape::NoAdmin,
    Shape::OpaqueOrganizationIds,
    Shape::UnavailableNowAndThen,
    Shape::TfePaths,
    Shape::StoresNothing,
    Shape::GenericStore,
    Shape::TfeCreate200,
    Shape::RegistrySourceOtherHost,
    Shape::TypedBodies,
    Shape::MembershipWritesOnly,
    Shape::RunsNeedConfiguration,
    Shape::ListLag,
    Shape::Delete202Later,
    Shape::Unconfigured,
    Shape::CloudBlockOnly,
];

static CATALOG: [ShapeInfo; 21] = [
    ShapeInfo {
        name: "api-v2-only",
        description: "the API answers only under /api/v2; every bare API path answers 404",
    },
    ShapeInfo {
        name: "one-organization",
        description: "one seeded organization, acme; organizations cannot be listed, created, updated or deleted",
    },
    ShapeInfo {
        name: "registry-only",
        description: "only the module registry read protocol answers; acme/network/aws 1.0.0 is seeded",
    },
    ShapeInfo {
        name: "numeric-ids",
        description: "every id but an organization's is a JSON number (paths take the number)",
    },
    ShapeInfo {
        name: "no-runner",
        description: "runs never leave pending: apply and discard answer 409",
    },
    ShapeInfo {
        name: "tfe-words",
        description: "TFE's words where the spec and TFE disagree (serve --compat tfe): force_canceled, run force-cancel 409, 415, trailing slashes",
    },
    ShapeInfo {
        name: "no-admin",
        description: "no administrator API: every /admin path answers 404 (the rest of the API is whole)",
    },
    ShapeInfo {
        name: "opaque-organization-ids",
        description: "an organization's id is not its name (org- and the name's hex); paths take only the name",
    },
    ShapeInfo {
        name: "unavailable-now-and-then",
        description: "a load balancer answers every 40th request 503 (plain text, Retry-After: 1)",
    },
    ShapeInfo {
        name: "tfe-paths",
        description: "engine versions only at /admin/terraform-versions, IP ranges only at /api/meta/ip-ranges (TFE's paths)",
    },
    ShapeInfo {
        name: "stores-nothing",
        description: "implements nothing: every route answers a plausible document, nothing is stored (what a pass must not be)",
    },
    ShapeInfo {
        name: "generic-store",
        description: "a generic JSON:API store: POST keeps, GET shows and lists, PATCH merges, DELETE forgets; no domain meaning",
    },
    ShapeInfo {
        name: "tfe-create-200",
        description: "team, team access and agent pool creates answer 200, as TFE documents them (not 201)",
    },
    ShapeInfo {
        name: "registry-source-other-host",
        description: "a module download's source is on another origin (127.0.0.1 and localhost swapped), served there without the token",
    },
    ShapeInfo {
        name: "typed-bodies",
        description: "a request document whose data object has no type is refused 422 (JSON:API requires it; seen on a real server)",
    },
    ShapeInfo {
        name: "membership-writes-only",
        description: "organization memberships are created and deleted, but no read of them is routed (seen on a real server)",
    },
    ShapeInfo {
        name: "runs-need-configuration",
        description: "a run of a workspace without a configuration version is refused 422 (TFE and others)",
    },
    ShapeInfo {
        name: "list-lag",
        description: "a list shows a new item only 1.5 s after its create (a search index, a replica): correct, eventually consistent",
    },
    ShapeInfo {
        name: "delete-202-later",
        description: "a delete of what its path shows answers 202 Accepted and takes effect 1.5 s later (a queued delete)",
    },
    ShapeInfo {
        name: "unconfigured",
        description: "an instance as installed: Twilio off (its verify refused 422), configuration versions from the API without commit information (ingress-attributes 404)",
    },
    ShapeInfo {
        name: "cloud-block-only",
        description: "only what terraform's cloud block uses: ping, account, entitlements, one seeded workspace read by name and locked, state and configuration versions, runs; the rest answers 404",
    },
];

/// The catalog of every shape the reference can take, in a fixed order.
pub fn shape_catalog() -> &'static [ShapeInfo] {
    &CATALOG
}

impl Shape {
    /// The catalog name (`api-v2-only`).
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The catalog entry of this shape.
    pub fn info(self) -> &'static ShapeInfo {
        let index = ALL.iter().position(|s| *s == self).unwrap_or_default();
        &CATALOG[index]
    }
}

impl FromStr for Shape {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let name = s.trim();
        ALL.iter()
            .copied()
            .find(|shape| shape.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = CATALOG.iter().map(|i| i.name).collect();
                format!("unknown shape `{name}`; valid names: {}", names.join(", "))
            })
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The name of the organization `one-organization` and `registry-only` seed.
pub(crate) const SEEDED_ORGANIZATION: &str = "acme";

/// The seeded registry module of `registry-only`: namespace, name, provider, version.
pub(crate) const SEEDED_MODULE: (&str, &str, &str, &str) = ("acme", "network", "aws", "1.0.0");

/// The routes `one-organization` takes away (on both path forms).
const ONE_ORGANIZATION_ABSENT: &[&str] = &[
    "GET /organizations",
    "POST /organizations",
    "PATCH /organizations/:organization_name",
    "DELETE /organizations/:organization_name",
    "PATCH /admin/organizations/:organization_name",
    "DELETE /admin/organizations/:organization_name",
];

/// The creates `tfe-create-200` answers 200 (tfe-api-facts 9: TFE documents 200 for them).
const CREATED_200: &[&str] = &[
    "POST /organizations/:organization_name/teams",
    "POST /team-workspaces",
    "POST /team-projects",
    "POST /organizations/:organization_name/agent-pools",
    "POST /organizations/:organization_name/agent-pool",
];

/// The reads `membership-writes-only` takes away.
const MEMBERSHIP_READS: &[&str] = &[
    "GET /organizations/:organization_name/organization-memberships",
    "GET /organization-memberships",
    "GET /organization-memberships/:organization_membership_id",
];

/// The workspace `cloud-block-only` seeds in [`SEEDED_ORGANIZATION`]: its name and fixed id.
pub(crate) const SEEDED_WORKSPACE: (&str, &str) = ("cloud", "ws-cloudblockseeded");

/// The only routes `cloud-block-only` serves (on both path forms): what terraform's `cloud`
/// block and its remote operations send.
const CLOUD_BLOCK_ROUTES: &[&str] = &[
    "GET /ping",
    "GET /account/details",
    "GET /organizations/:organization_name/entitlement-set",
    "GET /organizations/:organization_name/workspaces/:workspace_name",
    "POST /workspaces/:workspace_id/actions/lock",
    "POST /workspaces/:workspace_id/actions/unlock",
    "POST /workspaces/:workspace_id/actions/force-unlock",
    "POST /workspaces/:workspace_id/state-versions",
    "GET /workspaces/:workspace_id/current-state-version",
    "GET /state-versions/:state_version_id",
    "POST /workspaces/:workspace_id/configuration-versions",
    "GET /configuration-versions/:configuration_version_id",
    "POST /runs",
    "GET /runs/:run_id",
    "POST /runs/:run_id/actions/apply",
    "POST /runs/:run_id/actions/cancel",
    "POST /runs/:run_id/actions/discard",
    "GET /plans/:plan_id",
    "GET /plans/:plan_id/logs",
    "GET /applies/:apply_id",
    "GET /applies/:apply_id/logs",
];

/// The enabled shapes, with the questions the service asks about them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Shapes(pub Vec<Shape>);

impl Shapes {
    /// Whether a shape is on.
    pub fn has(&self, shape: Shape) -> bool {
        self.0.contains(&shape)
    }

    /// Whether a create's 201 is answered 200 (`tfe-create-200`): `bare` is the path without
    /// `/api/v2`.
    pub fn created_200(&self, method: &Method, bare: &str) -> bool {
        self.has(Shape::TfeCreate200)
            && CREATED_200
                .iter()
                .any(|route| RouteSpec::matches_text(route, method.as_str(), bare))
    }

    /// The origin a module download's source is served from: `root` itself, or under
    /// `registry-source-other-host` its other loopback name (127.0.0.1 and localhost swapped).
    pub fn source_root(&self, root: &str) -> String {
        if !self.has(Shape::RegistrySourceOtherHost) {
            return root.to_string();
        }
        if root.contains("://127.0.0.1") {
            root.replacen("://127.0.0.1", "://localhost", 1)
        } else {
            root.replacen("://localhost", "://127.0.0.1", 1)
        }
    }

    /// Whether the request's route is absent from the shaped service (it then answers 404 as
    /// an absent route). `bare` is the path without `/api/v2`; `prefixed` says it had it; `meta`
    /// that it was TFE's `/api/meta/...`.
    pub fn refuses(&self, method: &Method, bare: &str, prefixed: bool, meta: bool) -> bool {
        if self.has(Shape::ApiV2Only) && is_bare_api(bare, prefixed) {
            return true;
        }
        if self.has(Shape::OneOrganization)
            && ONE_ORGANIZATION_ABSENT
                .iter()
                .any(|route| RouteSpec::matches_text(route, method.as_str(), bare))
        {
            return true;
        }
        if self.has(Shape::MembershipWritesOnly)
            && MEMBERSHIP_READS
                .iter()
                .any(|route| RouteSpec::matches_text(route, method.as_str(), bare))
        {
            return true;
        }
        if self.has(Shape::CloudBlockOnly)
            && !is_upload_path(bare)
            && !CLOUD_BLOCK_ROUTES
                .iter()
                .any(|route| RouteSpec::matches_text(route, method.as_str(), bare))
        {
            return true;
        }
        if self.has(Shape::NoAdmin) && (bare == "/admin" || bare.starts_with("/admin/")) {
            return true;
        }
        if self.has(Shape::TfePaths)
            && ((bare == "/meta/ip-ranges" && !meta)
                || bare == "/admin/engine-versions"
                || bare.starts_with("/admin/engine-versions/"))
        {
            return true;
        }
        if self.has(Shape::RegistryOnly) {
            let registry = bare == "/.well-known/terraform.json"
                || bare == "/api/registry/v1/modules"
                || bare.starts_with("/api/registry/v1/modules/");
            let archive = is_upload_path(bare) && (method == Method::GET || method == Method::HEAD);
            if prefixed || !(registry || archive) {
                return true;
            }
        }
        false
    }
}

// ---- the seeded archive ----

/// The archive of the module version `registry-only` seeds: a gzip-compressed tar (stored
/// deflate blocks) holding one file, `main.tf`. The same bytes every time; the seeded version's
/// download (`X-Terraform-Get`) answers exactly these bytes.
pub fn seeded_archive() -> Vec<u8> {
    const MAIN_TF: &str = "variable \"cidr_block\" {\n  type    = string\n  default = \"10.0.0.0/16\"\n}\n\noutput \"cidr_block\" {\n  value = var.cidr_block\n}\n";
    gzip(&tar(&[("main.tf", MAIN_TF.as_bytes())]))
}

/// A POSIX ustar archive of regular files (mode 0644, owner 0, time 0).
pub(crate) fn tar(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, bytes) in files {
        let mut header = [0u8; 512];
        let mut field = |at: usize, text: &[u8]| header[at..at + text.len()].copy_from_slice(text);
        field(0, name.as_bytes());
        field(100, b"0000644\0");
        field(108, b"0000000\0");
        field(116, b"0000000\0");
        field(124, format!("{:011o}\0", bytes.len()).as_bytes());
        field(136, b"00000000000\0");
        field(148, b"        ");
        field(156, b"0");
        field(257, b"ustar\0");
        field(263, b"00");
        let sum: u32 = header.iter().map(|b| u32::from(*b)).sum();
        header[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(bytes);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    // Two zero blocks end the archive.
    out.resize(out.len() + 1024, 0);
    out
}

/// A gzip member (RFC 1952) of stored deflate blocks (RFC 1951, BTYPE 00): valid and
/// deterministic without a compressor.
pub(crate) fn gzip(data: &[u8]) -> Vec<u8> {
    // Magic, deflate, no flags, mtime 0, no extra flags, OS unknown.
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    let mut chunks = data.chunks(0xffff).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(chunk) = chunks.next() {
        let last = chunks.peek().is_none();
        let len = chunk.len() as u16;
        out.push(u8::from(last));
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

/// CRC-32 (IEEE 802.3, reflected), as gzip uses it.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for byte in data {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalog_name_parses_and_displays() {
        assert_eq!(shape_catalog().len(), ALL.len());
        for (info, shape) in shape_catalog().iter().zip(ALL) {
            let parsed: Shape = info.name.parse().expect("catalog names parse");
            assert_eq!(parsed, shape);
            assert_eq!(parsed.to_string(), info.name);
            assert_eq!(parsed.info(), info);
        }
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let err = "two-organizations".parse::<Shape>().unwrap_err();
        for info in shape_catalog() {
            assert!(err.contains(info.name), "{err}");
        }
    }

    #[test]
    fn crc32_has_the_standard_check_value() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn the_archive_is_a_gzip_member_holding_a_ustar_file() {
        let archive = seeded_archive();
        assert_eq!(archive, seeded_archive(), "deterministic");
        assert_eq!(&archive[..3], &[0x1f, 0x8b, 8]);
        // One final stored block after the 10-byte header.
        assert_eq!(archive[10], 1);
        let len = usize::from(u16::from_le_bytes([archive[11], archive[12]]));
        let nlen = u16::from_le_bytes([archive[13], archive[14]]);
        assert_eq!(nlen, !(len as u16));
        let tar = &archive[15..15 + len];
        let trailer = &archive[15 + len..];
        assert_eq!(trailer.len(), 8);
        assert_eq!(trailer[..4], crc32(tar).to_le_bytes());
        assert_eq!(trailer[4..], (tar.len() as u32).to_le_bytes());
        assert_eq!(tar.len() % 512, 0);
        assert_eq!(&tar[..8], b"main.tf\0");
        assert_eq!(&tar[257..263], b"ustar\0");
        let mut header = tar[..512].to_vec();
        header[148..156].copy_from_slice(b"        ");
        let sum: u32 = header.iter().map(|b| u32::from(*b)).sum();
        let written = std::str::from_utf8(&tar[148..154]).unwrap();
        assert_eq!(u32::from_str_radix(written, 8).unwrap(), sum);
        let size = std::str::from_utf8(&tar[124..135]).unwrap();
        let size = usize::from_str_radix(size, 8).unwrap();
        let body = std::str::from_utf8(&tar[512..512 + size]).unwrap();
        assert!(body.starts_with("variable \"cidr_block\""), "{body}");
        assert!(tar[tar.len() - 1024..].iter().all(|b| *b == 0));
    }
}
