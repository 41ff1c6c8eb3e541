//! Path variants: the forms under which one endpoint is tested.
//!
//! Versioning 1: every endpoint under `{base_url}` answers with and without `/api/v2`, so it
//! gets a `bare` and an `api-v2` variant (also when the spec lists it only with the prefix).
//! Versioning 3: a deprecated form gets `deprecated` and `deprecated-api-v2`. Registry read
//! endpoints run once against `{registry_url}`, uploads once against `{upload_url}`.

use super::paths::{path_for, REGISTRY, UPLOAD};
use super::{Endpoint, Group};

/// The form of a path a test uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// The path without `/api/v2`.
    Bare,
    /// The path with `/api/v2`.
    ApiV2,
    /// The deprecated form, without `/api/v2`.
    Deprecated,
    /// The deprecated form, with `/api/v2`.
    DeprecatedApiV2,
    /// Another spelling the spec gives, without `/api/v2`.
    Alias,
    /// Another spelling the spec gives, with `/api/v2`.
    AliasApiV2,
    /// Under the registry URL.
    Registry,
    /// The upload URL the service returned.
    Upload,
}

impl Variant {
    /// The variant's name, the last segment of a test name.
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::Bare => "bare",
            Variant::ApiV2 => "api-v2",
            Variant::Deprecated => "deprecated",
            Variant::DeprecatedApiV2 => "deprecated-api-v2",
            Variant::Alias => "alias",
            Variant::AliasApiV2 => "alias-api-v2",
            Variant::Registry => "registry",
            Variant::Upload => "upload",
        }
    }

    /// True for the variants that carry the `/api/v2` prefix.
    pub fn has_prefix(self) -> bool {
        matches!(
            self,
            Variant::ApiV2 | Variant::DeprecatedApiV2 | Variant::AliasApiV2
        )
    }

    /// The variant addressing the same form with the other prefix choice.
    pub fn counterpart(self) -> Option<Variant> {
        match self {
            Variant::Bare => Some(Variant::ApiV2),
            Variant::ApiV2 => Some(Variant::Bare),
            Variant::Deprecated => Some(Variant::DeprecatedApiV2),
            Variant::DeprecatedApiV2 => Some(Variant::Deprecated),
            Variant::Alias => Some(Variant::AliasApiV2),
            Variant::AliasApiV2 => Some(Variant::Alias),
            Variant::Registry | Variant::Upload => None,
        }
    }
}

/// One test: an endpoint under one variant.
#[derive(Debug, Clone)]
pub struct TestCase {
    /// `group::endpoint::variant`.
    pub name: String,
    /// The endpoint's group.
    pub group: String,
    /// The spec section the group cites.
    pub spec: String,
    /// The endpoint.
    pub endpoint: Endpoint,
    /// The variant.
    pub variant: Variant,
    /// The method this variant sends.
    pub method: String,
    /// The path template this variant sends (relative to the root, registry URL or upload URL).
    pub path: String,
}

pub(super) fn expand(group: &Group, endpoint: &Endpoint) -> Vec<TestCase> {
    let make = |variant: Variant, method: &str, path: String| TestCase {
        name: format!("{}::{}::{}", group.group, endpoint.id, variant.as_str()),
        group: group.group.clone(),
        spec: group.spec.clone(),
        endpoint: endpoint.clone(),
        variant,
        method: method.to_string(),
        path,
    };
    if let Some(rest) = endpoint.path.strip_prefix(REGISTRY) {
        return vec![make(Variant::Registry, &endpoint.method, rest.to_string())];
    }
    if endpoint.path.starts_with(UPLOAD) {
        return vec![make(
            Variant::Upload,
            &endpoint.method,
            endpoint.path.clone(),
        )];
    }
    let mut tests = vec![
        make(
            Variant::Bare,
            &endpoint.method,
            path_for(&endpoint.path, Variant::Bare),
        ),
        make(
            Variant::ApiV2,
            &endpoint.method,
            path_for(&endpoint.path, Variant::ApiV2),
        ),
    ];
    if let Some(dep) = &endpoint.deprecated {
        for variant in [Variant::Deprecated, Variant::DeprecatedApiV2] {
            tests.push(make(variant, &dep.method, path_for(&dep.path, variant)));
        }
    }
    if let Some(alias) = &endpoint.alias {
        for variant in [Variant::Alias, Variant::AliasApiV2] {
            tests.push(make(variant, &alias.method, path_for(&alias.path, variant)));
        }
    }
    tests
}
