//! A run's status: set with its timestamps, its actions, its plan's and apply's status and
//! logs (the run routes and the administrator's force-cancel), and whether it can still change.

use serde_json::{json, Value};

use crate::error::ApiResult;
use crate::store::{now, Store, FINAL_RUN_STATES};

/// Sets a run's status with its timestamps and the actions it allows (without a runner a
/// pending run cannot be discarded: it is waiting for a plan that never comes).
pub(crate) fn set_status(store: &mut Store, run_id: &str, status: &str) -> ApiResult<()> {
    let (runner, tfe) = (store.runner, store.tfe);
    let run = store.find_mut("runs", run_id)?;
    let is_destroy = run.flag("is-destroy");
    run.attributes.insert("status".into(), json!(status));
    if let Some(Value::Object(ts)) = run.attributes.get_mut("status-timestamps") {
        // The steps a real run goes through on its way (nothing is executed: the story).
        let on_the_way: &[&str] = match status {
            "planned" | "planned_and_finished" => &["plan-queued-at", "planning-at"],
            "applied" => &["confirmed-at", "apply-queued-at", "applying-at"],
            _ => &[],
        };
        for step in on_the_way {
            if !ts.contains_key(*step) {
                ts.insert((*step).to_string(), json!(now()));
            }
        }
        ts.insert(format!("{}-at", status.replace('_', "-")), json!(now()));
    }
    let pending_or_planned = matches!(status, "pending" | "planned");
    // TFE allows force-cancel only after a cancel that did not stop the run; here a cancel
    // always stops it, so under TFE's words force-cancel is never available.
    let force_cancelable = pending_or_planned && !tfe;
    run.attributes.insert(
        "actions".into(),
        json!({
            "is-confirmable": status == "planned",
            "is-discardable": status == "planned" || (status == "pending" && runner),
            "is-cancelable": pending_or_planned,
            "is-force-cancelable": force_cancelable,
        }),
    );
    if matches!(status, "canceled" | "force_canceled" | "cancelled") {
        run.attributes.insert("canceled-at".into(), json!(now()));
    }
    let apply = run.rel_id("apply").map(String::from);
    let plan = run.rel_id("plan").map(String::from);
    let (plan_status, apply_status) = match status {
        "pending" => ("pending", "unreached"),
        "planned" | "planned_and_finished" => ("finished", "unreached"),
        "applied" => ("finished", "finished"),
        "discarded" | "canceled" | "force_canceled" | "cancelled" => ("canceled", "unreached"),
        _ => ("finished", "unreached"),
    };
    for (kind, id, to) in [
        ("plans", plan, plan_status),
        ("applies", apply, apply_status),
    ] {
        let Some(id) = id else { continue };
        if let Some(r) = store.get_mut(kind, &id) {
            r.attributes.insert("status".into(), json!(to));
            if let Some(Value::Object(ts)) = r.attributes.get_mut("status-timestamps") {
                ts.insert(format!("{to}-at"), json!(now()));
            }
        }
        // The log: begun (STX) until the step ends, then a plausible story (nothing is
        // executed), ended by ETX as TFE's log stream is.
        let log = match (kind, to) {
            ("plans", "finished") => plan_log(is_destroy),
            ("applies", "finished") => apply_log(is_destroy),
            (_, "canceled") => "\u{2}The run was canceled.\n\u{3}".to_string(),
            _ => "\u{2}".to_string(),
        };
        let object = match store
            .objects
            .iter()
            .find(|(_, o)| o.target == id && o.kind == "logs")
        {
            Some((object, _)) => object.clone(),
            None => store.new_object("logs", &id),
        };
        if let Some(o) = store.objects.get_mut(&object) {
            o.bytes = Some(log.into_bytes());
        }
    }
    Ok(())
}

/// The log of a finished plan, framed by STX and ETX as TFE's log stream is.
fn plan_log(destroy: bool) -> String {
    let body = if destroy {
        "No objects need to be destroyed."
    } else {
        "No changes. Your infrastructure matches the configuration."
    };
    format!(
        "\u{2}Terraform v1.9.5\non linux_amd64\nInitializing plugins and modules...\n\n{body}\n\n\
         (conform reference: nothing was executed; this plan is the story the service tells.)\n\u{3}"
    )
}

/// The log of a finished apply.
fn apply_log(destroy: bool) -> String {
    let body = if destroy {
        "Destroy complete! Resources: 0 destroyed."
    } else {
        "Apply complete! Resources: 0 added, 0 changed, 0 destroyed."
    };
    format!(
        "\u{2}Terraform v1.9.5\non linux_amd64\nInitializing plugins and modules...\n\n{body}\n\n\
         (conform reference: nothing was executed.)\n\u{3}"
    )
}

/// Whether a run can still change (admin force-cancel).
pub(crate) fn is_final(status: &str) -> bool {
    FINAL_RUN_STATES.contains(&status)
}
