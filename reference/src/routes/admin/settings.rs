//! The instance settings (`/admin/{group}`: general, SAML, SCIM, Twilio and the others): shown,
//! updated, SCIM's deleted; SAML's old certificate revoked, Twilio verified.

use axum::extract::Path;
use axum::response::Response;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::jsonapi::{no_content, ok, resource, Body, Ctx};

fn settings_id(group: &str) -> ApiResult<&str> {
    group
        .strip_suffix("-settings")
        .filter(|g| {
            matches!(
                *g,
                "general"
                    | "cost-estimation"
                    | "saml"
                    | "smtp"
                    | "twilio"
                    | "customization"
                    | "scim"
            )
        })
        .ok_or_else(|| ApiError::NotFound("route not found".into()))
}

fn render_settings(id: &str, attrs: &Map<String, Value>) -> Value {
    json!({"id": id, "type": format!("{id}-settings"), "attributes": attrs,
        "links": {"self": format!("/api/v2/admin/{id}-settings")}})
}

/// The SCIM settings before any change (TFE; go-tfe's AdminSCIMSetting): off.
fn scim_defaults() -> Map<String, Value> {
    json!({"enabled": false, "paused": false, "site-admin-group-scim-id": null,
        "site-admin-group-display-name": null})
    .as_object()
    .cloned()
    .unwrap_or_default()
}

// GET /api/v2/admin/S-settings
pub(super) async fn show_settings(ctx: Ctx, Path(group): Path<String>) -> ApiResult<Response> {
    let id = settings_id(&group)?;
    let store = ctx.state.read();
    let attrs = match store.settings.get(id) {
        Some(attrs) => attrs.clone(),
        None if id == "scim" => scim_defaults(),
        None => Map::new(),
    };
    ok(render_settings(id, &attrs))
}

// DELETE /api/v2/admin/scim-settings (TFE; go-tfe's SCIM.Delete, the helpers of
// TestUsersReadCurrent): SCIM turned off, 204. Other settings cannot be deleted.
pub(super) async fn delete_settings(ctx: Ctx, Path(group): Path<String>) -> ApiResult<Response> {
    if settings_id(&group)? != "scim" {
        return Err(ApiError::MethodNotAllowed);
    }
    ctx.state
        .write()
        .settings
        .insert("scim".into(), scim_defaults());
    no_content()
}

// PATCH /api/v2/admin/S-settings: echoes what it was sent.
pub(super) async fn update_settings(
    ctx: Ctx,
    Path(group): Path<String>,
    Body(body): Body,
) -> ApiResult<Response> {
    let id = settings_id(&group)?.to_string();
    let kind = format!("{id}-settings");
    let doc = resource(&body, &[kind.as_str(), "settings"])?;
    if id == "saml" && !ctx.state.fault(crate::faults::Kind::SamlMethodsUnchecked) {
        refuse_unknown_signature_methods(&doc.attributes)?;
    }
    let mut store = ctx.state.write();
    let attrs = store.settings.entry(id.clone()).or_insert_with(|| {
        if id == "scim" {
            scim_defaults()
        } else {
            Map::new()
        }
    });
    for (k, v) in doc.attributes {
        attrs.insert(k, v);
    }
    let attrs = attrs.clone();
    ok(render_settings(&id, &attrs))
}

/// 422 for a SAML signature method TFE does not document (its SAML settings take `SHA1` or
/// `SHA256` for `signature-signing-method` and `signature-digest-method`); nothing is stored.
/// The `saml-methods-unchecked` fault skips it.
fn refuse_unknown_signature_methods(attrs: &Map<String, Value>) -> ApiResult<()> {
    for name in ["signature-signing-method", "signature-digest-method"] {
        match attrs.get(name) {
            None | Some(Value::Null) => {}
            Some(Value::String(m)) if m == "SHA1" || m == "SHA256" => {}
            Some(_) => {
                return Err(ApiError::attribute(
                    name,
                    format!("{name} must be SHA1 or SHA256"),
                ))
            }
        }
    }
    Ok(())
}

// POST /api/v2/admin/saml-settings/actions/revoke-old-certificate
pub(super) async fn revoke_old_certificate(ctx: Ctx) -> ApiResult<Response> {
    let mut store = ctx.state.write();
    let attrs = store.settings.entry("saml".into()).or_default();
    attrs.insert("old-idp-cert".into(), Value::Null);
    let attrs = attrs.clone();
    ok(render_settings("saml", &attrs))
}

// POST /api/v2/admin/twilio-settings/verify
pub(super) async fn twilio_verify(ctx: Ctx, Body(body): Body) -> ApiResult<Response> {
    if !body.is_null() && !body.is_object() {
        return Err(ApiError::invalid("the body must be a JSON object"));
    }
    let store = ctx.state.read();
    let attrs = store.settings.get("twilio").cloned().unwrap_or_default();
    let enabled = attrs.get("enabled").and_then(Value::as_bool) == Some(true);
    if !enabled && ctx.state.shapes.has(crate::shapes::Shape::Unconfigured) {
        return Err(ApiError::invalid("Twilio is not enabled"));
    }
    ok(render_settings("twilio", &attrs))
}
