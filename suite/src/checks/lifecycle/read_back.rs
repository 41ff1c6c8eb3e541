//! Checks that a resource reads back as made or changed: an update persisted, a create or
//! update answer echoing what it was sent, a later show holding what the answer said
//! (`read-back`, `tfe.read-back`), an update applied, TFE's create defaults.

use serde_json::{Map, Value};

use crate::checks::Message;

/// `update.persisted`: what `whence` shows at `pointer` is the `value` an update sent.
pub fn persisted(object: &Value, pointer: &str, value: &str, whence: &str) -> Result<(), Message> {
    let got = object.pointer(pointer);
    if got.and_then(Value::as_str) == Some(value) {
        Ok(())
    } else {
        Err(message!(
            "expected {whence} to hold `{value}` at {pointer}, as the update sent; received {}",
            got.map(Value::to_string)
                .unwrap_or_else(|| "nothing".into())
        ))
    }
}

/// The attributes a create or update `sent` that its `answer` carries with the same value:
/// what a later show must answer. One the answer leaves out or answers otherwise is taken as
/// write-only or normalized by the server, and is not asked of the show.
pub fn kept(sent: &Map<String, Value>, answer: &Value) -> Map<String, Value> {
    let answered = attributes_of(answer);
    sent.iter()
        .filter(|(name, value)| answered.and_then(|a| a.get(*name)) == Some(*value))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect()
}

/// The attributes a create or update `sent` that its `answer` carries, at the value the answer
/// gives them: what a later show must not contradict (`read-back`). An answer that normalizes
/// a value (a trimmed name) is held to its own value; one that answers `true` for a stored
/// `false` is contradicted by the show. One the answer leaves out is taken as write-only.
pub fn answered(sent: &Map<String, Value>, answer: &Value) -> Map<String, Value> {
    let carried = attributes_of(answer);
    sent.keys()
        .filter_map(|name| Some((name.clone(), carried?.get(name)?.clone())))
        .collect()
}

/// `tfe.read-back` on a create's or update's own answer (facts 6.4: the response echoes every
/// attribute sent): each attribute `sent` is answered at the value sent, except the
/// `write_only` ones (secrets TFE never shows again, facts 6.9), which may be left out or null.
pub fn echoes_sent(
    sent: &Map<String, Value>,
    answer: &Value,
    write_only: &[String],
    what: &str,
) -> Result<(), Message> {
    let carried = attributes_of(answer);
    let differing: Vec<String> = sent
        .iter()
        .filter_map(|(name, value)| {
            let got = carried.and_then(|a| a.get(name));
            let hidden = write_only.contains(name)
                && got.is_none_or(|v| v.is_null() || v.as_str() == Some(""));
            match got {
                _ if hidden => None,
                Some(got) if got == value => None,
                Some(got) => Some(format!("`{name}`: sent {value}, answered {got}")),
                None => Some(format!("`{name}`: sent {value}, answered nothing")),
            }
        })
        .collect();
    if differing.is_empty() {
        Ok(())
    } else {
        Err(message!(
            "expected {what} to echo every attribute it was sent (tfe-api-facts 6.4); {}",
            differing.join("; ")
        ))
    }
}

/// A single-resource document's `data.attributes`.
fn attributes_of(doc: &Value) -> Option<&Map<String, Value>> {
    doc.pointer("/data/attributes").and_then(Value::as_object)
}

/// The to-one relationships a create `sent` (by name, the related id) that its `answer`
/// holds with the same id: what a later show must hold.
pub fn kept_links(
    sent: &std::collections::BTreeMap<String, String>,
    answer: &Value,
) -> std::collections::BTreeMap<String, String> {
    sent.iter()
        .filter(|(name, id)| linked_id(answer, name) == Some(id.as_str()))
        .map(|(name, id)| (name.clone(), id.clone()))
        .collect()
}

/// The id a document's to-one relationship `name` names.
fn linked_id<'a>(doc: &'a Value, name: &str) -> Option<&'a str> {
    doc.pointer(&format!("/data/relationships/{name}/data/id"))
        .and_then(Value::as_str)
}

/// `tfe.read-back` of relationships: `shown` (`what`) holds every relationship its create
/// sent and answered (`known`), to the same resource. TFE level: the spec shows none.
pub fn links_held(
    known: &std::collections::BTreeMap<String, String>,
    shown: &Value,
    what: &str,
) -> Result<(), Message> {
    let differing: Vec<String> = known
        .iter()
        .filter_map(|(name, id)| {
            let got = linked_id(shown, name);
            (got != Some(id.as_str())).then(|| match got {
                Some(got) => format!("`{name}`: {id} then, {got} now"),
                None => format!("`{name}`: {id} then, none now"),
            })
        })
        .collect();
    if differing.is_empty() {
        Ok(())
    } else {
        Err(message!(
            "expected {what} to hold the relationships it was made with; {}",
            differing.join("; ")
        ))
    }
}

/// `read-back`: `shown` (`what`) is the resource that was made or changed: of the same `type`
/// as its create or update answered (when both name one), and every `known` attribute (what
/// that request sent and answered, [`kept`]) that it carries has the same value. An attribute
/// it leaves out is `tfe.read-back`'s ([`echoes`]): the spec shows no attribute.
pub fn reads_back(
    known: &Map<String, Value>,
    made_type: Option<&str>,
    shown: &Value,
    what: &str,
) -> Result<(), Message> {
    let shown_type = shown.pointer("/data/type").and_then(Value::as_str);
    if let (Some(made), Some(got)) = (made_type, shown_type) {
        if made != got {
            return Err(message!(
                "expected {what} to answer a resource of type `{made}`, as it was answered when made; received type `{got}`"
            ));
        }
    }
    let attributes = attributes_of(shown);
    let differing: Vec<String> = known
        .iter()
        .filter_map(|(name, value)| match attributes.and_then(|a| a.get(name)) {
            Some(seen) if seen != value => Some(format!("`{name}`: {value} then, {seen} now")),
            _ => None,
        })
        .collect();
    if differing.is_empty() {
        Ok(())
    } else {
        Err(message!(
            "expected {what} to answer the attributes the resource was sent and answered with; {}",
            differing.join("; ")
        ))
    }
}

/// `tfe.read-back` (facts 6.4): `shown` (`what`) carries every `known` attribute (sent and
/// answered by the create or update, [`kept`]); their values are [`reads_back`]'s.
pub fn echoes(known: &Map<String, Value>, shown: &Value, what: &str) -> Result<(), Message> {
    let attributes = attributes_of(shown);
    let absent: Vec<String> = known
        .keys()
        .filter(|name| attributes.and_then(|a| a.get(*name)).is_none())
        .map(|name| format!("`{name}`"))
        .collect();
    if absent.is_empty() {
        Ok(())
    } else {
        Err(message!(
            "expected {what} to echo every attribute sent (and answered) when it was made or changed; absent: {}",
            absent.join(", ")
        ))
    }
}

/// `update.persisted`: an update that `sent` attributes is seen to have applied them: at
/// least one is carried at the value sent by its `answer` or the `shown` document after it,
/// and every one the answer carried at the value sent is carried so by the show (an answer
/// that says "changed" while the resource is not).
pub fn applied(sent: &Map<String, Value>, answer: &Value, shown: &Value) -> Result<(), Message> {
    let value =
        |doc: &Value, name: &str| -> Option<Value> { attributes_of(doc)?.get(name).cloned() };
    if sent.is_empty() {
        return Ok(());
    }
    let lost: Vec<String> = kept(sent, answer)
        .iter()
        .filter(|(name, sent)| value(shown, name).as_ref() != Some(*sent))
        .map(|(name, sent)| {
            let now = value(shown, name)
                .map(|v| v.to_string())
                .unwrap_or_else(|| "nothing".into());
            format!("`{name}`: sent and answered {sent}, shown {now}")
        })
        .collect();
    if !lost.is_empty() {
        return Err(message!(
            "expected a show after the update to carry what the update applied; {}",
            lost.join("; ")
        ));
    }
    if sent
        .iter()
        .any(|(name, v)| value(shown, name).as_ref() == Some(v))
    {
        return Ok(());
    }
    let names: Vec<String> = sent.keys().map(|k| format!("`{k}`")).collect();
    Err(message!(
        "expected the update's answer or a show after it to carry one of the attributes it sent ({}) at the value sent; neither does",
        names.join(", ")
    ))
}

/// `tfe.create-defaults`: for each attribute of `defaults` the create was not `sent`, its
/// `answer` carries the default.
pub fn defaults_hold(
    defaults: &Map<String, Value>,
    sent: &Map<String, Value>,
    answer: &Value,
) -> Result<(), Message> {
    let answered = attributes_of(answer);
    let wrong: Vec<String> = defaults
        .iter()
        .filter(|(name, _)| !sent.contains_key(*name))
        .filter_map(|(name, default)| match answered.and_then(|a| a.get(name)) {
            Some(got) if got == default => None,
            Some(got) => Some(format!("`{name}`: {got}, not {default}")),
            None => Some(format!("`{name}`: absent, not {default}")),
        })
        .collect();
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(message!(
            "expected the create to answer TFE's defaults for what it was not sent; {}",
            wrong.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_later_show_is_held_to_what_the_answer_said_and_the_answer_to_what_was_sent() {
        let sent = json!({"auto-queue-runs": false, "name": " a ", "secret": "s"});
        let sent = sent.as_object().unwrap();
        let answer = json!({"data": {"attributes": {"auto-queue-runs": true, "name": "a"}}});
        let known = answered(sent, &answer);
        assert_eq!(known.get("auto-queue-runs"), Some(&json!(true)));
        assert_eq!(known.get("name"), Some(&json!("a")));
        assert!(!known.contains_key("secret"));
        let stored = json!({"data": {"attributes": {"auto-queue-runs": false, "name": "a"}}});
        let e = reads_back(&known, None, &stored, "the show").unwrap_err();
        assert!(e.contains("`auto-queue-runs`: true then, false now"), "{e}");
        let write_only = ["secret".to_string()];
        let e = echoes_sent(sent, &answer, &write_only, "the answer").unwrap_err();
        assert!(
            e.contains("`auto-queue-runs`: sent false, answered true"),
            "{e}"
        );
        assert!(!e.contains("secret"), "{e}");
        let echoed = json!({"data": {"attributes": {"auto-queue-runs": false, "name": " a "}}});
        assert!(echoes_sent(sent, &echoed, &write_only, "the answer").is_ok());
        assert!(echoes_sent(sent, &echoed, &[], "the answer").is_err());
    }

    #[test]
    fn updates_persist() {
        let shown = json!({"data": {"attributes": {"name": "b", "secret": null}}});
        assert!(persisted(&shown, "/data/attributes/name", "b", "the show").is_ok());
        assert!(persisted(&shown, "/data/attributes/name", "c", "the show").is_err());
    }

    #[test]
    fn what_was_sent_and_answered_is_read_back() {
        let sent = json!({"name": "a", "secret": "s", "email": "A@x"});
        let answer =
            json!({"data": {"type": "teams", "attributes": {"name": "a", "email": "a@x"}}});
        let known = kept(sent.as_object().unwrap(), &answer);
        assert_eq!(known.keys().collect::<Vec<_>>(), ["name"]);
        let shown = json!({"data": {"type": "teams", "attributes": {"name": "a"}}});
        assert!(reads_back(&known, Some("teams"), &shown, "the show").is_ok());
        assert!(echoes(&known, &shown, "the show").is_ok());
        // a show without the attribute: core has nothing to compare, TFE wants it echoed
        let hollow = json!({"data": {"type": "teams", "attributes": {}}});
        assert!(reads_back(&known, Some("teams"), &hollow, "the show").is_ok());
        let e = echoes(&known, &hollow, "the show").unwrap_err();
        assert!(e.contains("`name`"), "{e}");
        let other = json!({"data": {"type": "users", "attributes": {"name": "a"}}});
        assert!(reads_back(&known, Some("teams"), &other, "the show")
            .unwrap_err()
            .contains("`users`"));
        let changed = json!({"data": {"type": "teams", "attributes": {"name": "b"}}});
        let e = reads_back(&known, None, &changed, "the show").unwrap_err();
        assert!(e.contains("\"a\" then, \"b\" now"), "{e}");
    }

    #[test]
    fn an_update_is_applied_when_the_show_carries_it() {
        let sent = json!({"name": "b"});
        let sent = sent.as_object().unwrap();
        let old = json!({"data": {"attributes": {"name": "a"}}});
        let new = json!({"data": {"attributes": {"name": "b"}}});
        let hollow = json!({"data": {"attributes": {}}});
        assert!(applied(sent, &new, &new).is_ok());
        assert!(applied(sent, &old, &new).is_ok());
        // answered as changed, shown as before or not at all
        assert!(applied(sent, &new, &old)
            .unwrap_err()
            .contains("shown \"a\""));
        assert!(applied(sent, &new, &hollow)
            .unwrap_err()
            .contains("shown nothing"));
        assert!(applied(sent, &old, &old).unwrap_err().contains("neither"));
        assert!(applied(&Map::new(), &old, &old).is_ok());
    }

    #[test]
    fn defaults_hold_for_what_was_not_sent() {
        let defaults = json!({"refresh": true, "is-destroy": false});
        let defaults = defaults.as_object().unwrap();
        let answer = json!({"data": {"attributes": {"refresh": true, "is-destroy": true}}});
        let sent = json!({"is-destroy": true});
        assert!(defaults_hold(defaults, sent.as_object().unwrap(), &answer).is_ok());
        let e = defaults_hold(defaults, &Map::new(), &answer).unwrap_err();
        assert!(e.contains("`is-destroy`: true, not false"), "{e}");
        let hollow = json!({"data": {"attributes": {}}});
        assert!(defaults_hold(defaults, &Map::new(), &hollow)
            .unwrap_err()
            .contains("absent"));
    }
}
