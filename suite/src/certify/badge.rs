//! What a bundle shows a person: `badge.svg` (from the template `badge.svg` beside this file),
//! `badge.md` (the snippet for an implementer's README) and `certificate.md` (the manifest in
//! words).

use std::fmt::Write;

use super::bundle::Manifest;

/// The badge's template: `{label}`, `{message}`, `{color}` and the widths and centres.
const TEMPLATE: &str = include_str!("badge.svg");

/// Pixels per character of the badge's 11 px Verdana, roughly, and the padding of a side.
const CHAR_WIDTH: usize = 7;
const PADDING: usize = 10;

/// The badge's message and colour for a statement.
fn message(manifest: &Manifest) -> (String, &'static str) {
    let s = &manifest.statement;
    let (mut message, color) = match (s.core, s.tfe) {
        (true, Some(true)) => ("core + tfe".to_string(), "#2e7d32"),
        (true, _) => ("core".to_string(), "#689f38"),
        (false, _) => ("not conformant".to_string(), "#c62828"),
    };
    if !s.scope.starts_with("the whole catalog") {
        message.push_str(" (partial)");
    }
    (message, color)
}

/// `badge.svg`.
pub fn svg(manifest: &Manifest) -> String {
    let label = "conform";
    let (message, color) = message(manifest);
    let label_width = label.chars().count() * CHAR_WIDTH + PADDING;
    let message_width = message.chars().count() * CHAR_WIDTH + PADDING;
    TEMPLATE
        .replace("{width}", &(label_width + message_width).to_string())
        .replace("{label_width}", &label_width.to_string())
        .replace("{message_width}", &message_width.to_string())
        .replace("{label_x}", &(label_width / 2).to_string())
        .replace(
            "{message_x}",
            &(label_width + message_width / 2).to_string(),
        )
        .replace("{color}", color)
        .replace("{label}", label)
        .replace("{message}", &message)
}

/// `badge.md`: the badge linked to the certificate, and the statement.
pub fn snippet(manifest: &Manifest) -> String {
    let (message, _) = message(manifest);
    format!(
        "[![conform: {message}](badge.svg)](certificate.md)\n\nCertified by conform {} on {}: {}. Check it offline: `conform verify certificate.tar`.\n",
        manifest.conform.version,
        manifest.day(),
        manifest.statement.text
    )
}

/// `certificate.md`: everything the manifest states, in words.
pub fn certificate(manifest: &Manifest) -> String {
    let mut md = String::from("# Conformance certificate\n\n");
    let s = &manifest.statement;
    let _ = writeln!(md, "**{}**\n", s.text);
    if !s.reasons.is_empty() {
        md.push_str("Why not:\n\n");
        for why in &s.reasons {
            let _ = writeln!(md, "- {why}");
        }
        md.push('\n');
    }
    let c = &manifest.contract;
    let spec = c
        .spec_sha256
        .clone()
        .unwrap_or_else(|| "none (this conform was built without the spec)".into());
    let mut rows: Vec<(String, String)> = [
        ("date", manifest.date.clone()),
        ("profile", manifest.profile.clone()),
        ("conform", manifest.conform.version.clone()),
        ("source commit", manifest.conform.commit.clone()),
        ("spec SHA-256", spec),
        ("catalog SHA-256", c.catalog_sha256.clone()),
        ("schemas SHA-256", c.schemas_sha256.clone()),
        ("command", format!("`{}`", manifest.command)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    rows.extend(
        manifest
            .target
            .iter()
            .map(|(k, v)| (format!("target: {k}"), v.clone())),
    );
    md.push_str("| | |\n|---|---|\n");
    for (key, value) in &rows {
        let _ = writeln!(md, "| {key} | {} |", value.replace('|', "\\|"));
    }
    md.push_str("\n## Waivers\n\n");
    if manifest.waivers.is_empty() {
        md.push_str("none\n");
    }
    for w in &manifest.waivers {
        let _ = writeln!(
            md,
            "- `{}` until {}: {}{}",
            w.test,
            w.expires,
            w.reason,
            w.link
                .as_deref()
                .map(|l| format!(" ({l})"))
                .unwrap_or_default()
        );
    }
    if !manifest.shards.is_empty() {
        md.push_str("\n## Shards merged\n\n");
        for shard in &manifest.shards {
            let _ = writeln!(md, "- {shard}");
        }
    }
    md.push_str("\nThe files and their SHA-256 are in `manifest.json`; `conform verify` checks them, the statement and the contract.\n");
    md
}
