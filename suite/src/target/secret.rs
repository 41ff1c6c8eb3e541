//! Tokens that never print.

use std::fmt;

/// A credential. `Debug` and `Display` print `(redacted)`; only [`Secret::expose`] gives it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The credential itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(redacted)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(redacted)")
    }
}

/// What a redacted credential reads as.
const REDACTED: &str = "(redacted)";

/// The length from which a secret is redacted wherever it occurs: a credential that long is
/// not a word of the run's own texts, so any occurrence is the credential (a target echoing
/// it in an error message, a body, a header). A shorter one (`adm`) is a piece of ordinary
/// names (`admin_users`): it is redacted only where it stands as a credential, and the run
/// warns that it is too short to redact safely ([`short_secret_warning`]).
pub const SAFE_SECRET_LEN: usize = 8;

/// Redacts the given secrets from `text`: a secret of [`SAFE_SECRET_LEN`] characters or
/// more wherever it occurs, a shorter one only where it stands as a credential
/// (`as_credential`), so that names and messages that merely contain its letters stay
/// intact.
pub fn redact(text: &str, secrets: &[&Secret]) -> String {
    let mut out = text.to_string();
    for secret in secrets.iter().map(|s| s.expose()) {
        if secret.is_empty() || !out.contains(secret) {
            continue;
        }
        out = if secret.chars().count() >= SAFE_SECRET_LEN {
            out.replace(secret, REDACTED)
        } else {
            as_credential(&out, secret)
        };
    }
    out
}

/// Whether what [`redact`] leaves of a short `secret` in `text` is only inside longer words
/// (`admin_users` for `adm`), never a value of its own (a header's, a quoted string's, a
/// query's): `Err` with the text around the first occurrence that stands alone. The tests'
/// one judge of a report that a short token went through.
pub fn only_inside_words(text: &str, secret: &str) -> Result<(), String> {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    for (at, _) in text.match_indices(secret) {
        let before = text[..at].chars().next_back();
        let after = text[at + secret.len()..].chars().next();
        if !word(before) && !word(after) {
            let from = text[..at]
                .char_indices()
                .rev()
                .nth(60)
                .map_or(0, |(i, _)| i);
            return Err(text[from..(at + secret.len() + 20).min(text.len())].to_string());
        }
    }
    Ok(())
}

/// `text` with every occurrence of `secret` that stands as a credential replaced by
/// [`REDACTED`]: a whole value after an authorization scheme (`Bearer adm`) or a header's
/// colon (`X-Token: adm`), a whole quoted string (`"token":"adm"`, `'adm'`), or a whole
/// query or form value (`?token=adm&page=2`). An occurrence inside a longer word
/// (`admin_users`, `/api/v2`, `::api-v2`) is left alone.
fn as_credential(text: &str, secret: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = 0;
    for (at, _) in text.match_indices(secret) {
        if at < rest {
            continue; // overlapping an occurrence already replaced
        }
        let before = &text[..at];
        let after = &text[at + secret.len()..];
        if stands_as_credential(before, after) {
            out.push_str(&text[rest..at]);
            out.push_str(REDACTED);
            rest = at + secret.len();
        }
    }
    out.push_str(&text[rest..]);
    out
}

/// Whether a value between `before` and `after` is a whole credential value.
fn stands_as_credential(before: &str, after: &str) -> bool {
    let next = after.chars().next();
    let ends_value = |extra: &[char]| {
        next.is_none_or(|c| {
            c.is_whitespace() || matches!(c, '"' | '\'' | ',') || extra.contains(&c)
        })
    };
    match before.chars().next_back() {
        // a quoted string: the same quote closes it
        Some(q @ ('"' | '\'')) => next == Some(q),
        // a query or form value
        Some('=') => ends_value(&['&', '#', ';']),
        // a header's value, or the credential after an authorization scheme
        Some(' ') => {
            let head = before.trim_end_matches(' ');
            let scheme = head
                .rsplit(|c: char| !c.is_ascii_alphanumeric() && c != '-')
                .next()
                .unwrap_or("");
            (head.ends_with(':') || is_scheme(scheme)) && ends_value(&[])
        }
        _ => false,
    }
}

/// An HTTP authorization scheme that precedes a credential (`Bearer`, `Basic`, `Token`).
fn is_scheme(word: &str) -> bool {
    ["bearer", "basic", "token"]
        .iter()
        .any(|s| word.eq_ignore_ascii_case(s))
}

/// The warning a run gives (on stderr, one line) about secrets shorter than
/// [`SAFE_SECRET_LEN`], which are redacted only where they stand as credentials; `None` when
/// every secret is long enough. Each secret comes with what it is (`token`, `administrator
/// token`); the warning names that, never the secret.
pub fn short_secret_warning(secrets: &[(&str, &Secret)]) -> Option<String> {
    let short: Vec<&str> = secrets
        .iter()
        .filter(|(_, s)| !s.0.is_empty() && s.0.chars().count() < SAFE_SECRET_LEN)
        .map(|(name, _)| *name)
        .collect();
    (!short.is_empty()).then(|| {
        format!(
            "warning: the {} {} shorter than {SAFE_SECRET_LEN} characters, too short to redact safely: the reports redact it only where it is sent or shown as a credential (headers, token fields, query values), not where its letters occur in names and messages",
            short.join(" and the "),
            if short.len() == 1 { "is" } else { "are" }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red(text: &str, secret: &str) -> String {
        redact(text, &[&Secret::new(secret)])
    }

    #[test]
    fn a_short_secret_is_redacted_only_where_it_is_a_credential() {
        for (text, want) in [
            (
                "Authorization: Bearer adm",
                "Authorization: Bearer (redacted)",
            ),
            ("  x-api-key: adm\n", "  x-api-key: (redacted)\n"),
            (
                r#"{"token":"adm","id":"at-1"}"#,
                r#"{"token":"(redacted)","id":"at-1"}"#,
            ),
            (r#"{"token": "adm"}"#, r#"{"token": "(redacted)"}"#),
            (
                "GET /api/v2/x?token=adm&page=2",
                "GET /api/v2/x?token=(redacted)&page=2",
            ),
            (
                "curl 'https://h/x?t=adm'",
                "curl 'https://h/x?t=(redacted)'",
            ),
            ("admin_users::list::api-v2", "admin_users::list::api-v2"),
            ("(redacted)in_users", "(redacted)in_users"),
            (
                r#"{"name":"admin_settings::show::bare"}"#,
                r#"{"name":"admin_settings::show::bare"}"#,
            ),
            ("the adm group", "the adm group"),
        ] {
            assert_eq!(red(text, "adm"), want, "{text}");
        }
        // a token that is also a path segment and a variant's word
        assert_eq!(
            red("GET /api/v2/runs (runs::show::api-v2) Bearer api", "api"),
            "GET /api/v2/runs (runs::show::api-v2) Bearer (redacted)"
        );
    }

    #[test]
    fn a_long_secret_is_redacted_wherever_it_occurs() {
        let secret = "canary-0d5e8c17b92f4a";
        assert_eq!(
            red(&format!("echoed {secret}, and x{secret}y"), secret),
            "echoed (redacted), and x(redacted)y"
        );
    }

    #[test]
    fn short_secrets_are_named_in_one_warning() {
        let (short, long) = (Secret::new("adm"), Secret::new("long-enough-token"));
        assert_eq!(short_secret_warning(&[("token", &long)]), None);
        let line = short_secret_warning(&[("token", &long), ("administrator token", &short)])
            .expect("a warning");
        assert!(
            line.contains("the administrator token is shorter than 8"),
            "{line}"
        );
        assert!(!line.contains("adm ") && !line.contains('\n'), "{line}");
    }
}
