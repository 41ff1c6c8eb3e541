//! How a sequence names things: an item's label in messages, an operation described for the
//! minimal sequence, and the variables its templates are filled from.

use std::collections::BTreeMap;

use super::{Env, Op, OpKind, Run};

impl<'a> Run<'a> {
    pub(super) fn label(&self, index: usize) -> String {
        let item = &self.model.items[index];
        format!(
            "{} #{} ({})",
            self.coll(item.coll).kind,
            self.model.ordinal(index),
            item.id
        )
    }

    pub(super) fn parent_label(&self, parent: Option<usize>) -> String {
        match parent {
            Some(p) => format!(" of {}", self.label(p)),
            None if self.family.namespace => format!(" of organization {}", self.org),
            None => String::new(),
        }
    }

    /// The step in words, or `None` when the operation has nothing to act on now.
    pub(super) fn describe(&self, op: &Op) -> Option<String> {
        let coll = self.coll(op.coll);
        let form = if op.api_v2 { " [/api/v2]" } else { "" };
        let text = match op.kind {
            OpKind::Create => {
                let parent = self.target_parent(op)?;
                let with = match coll.with {
                    Some(_) => format!(" for {}", self.label(self.with_item(op)?)),
                    None => String::new(),
                };
                let via = match &coll.create_alt {
                    Some(alt) if op.form % 2 == 1 => format!(" via {} {}", alt.method, alt.path),
                    _ => String::new(),
                };
                format!(
                    "create {}{}{with}{via}",
                    coll.kind,
                    self.parent_label(parent)
                )
            }
            OpKind::Show => {
                coll.show.as_ref()?;
                let via = match &coll.show_alt {
                    Some(alt) if op.form % 2 == 1 => format!(" via {alt}"),
                    _ => String::new(),
                };
                format!("show {}{via}", self.label(self.target_item(op)?))
            }
            OpKind::List => {
                coll.list.as_ref()?;
                let parent = self.target_parent(op)?;
                format!("list {}s{}", coll.kind, self.parent_label(parent))
            }
            OpKind::Walk => {
                coll.list.as_ref()?;
                if !coll.paged {
                    return None;
                }
                let parent = self.target_parent(op)?;
                format!(
                    "page through {}s{} with page_size {}",
                    coll.kind,
                    self.parent_label(parent),
                    op.page_size
                )
            }
            OpKind::Update => {
                coll.update.as_ref()?;
                format!("update {}", self.label(self.target_item(op)?))
            }
            OpKind::Delete => {
                coll.delete.as_ref()?;
                let via = match usize::from(op.form) % (1 + coll.delete_alt.len()) {
                    0 => String::new(),
                    n => {
                        let alt = &coll.delete_alt[n - 1];
                        let what = if alt.same_name { " (by name)" } else { "" };
                        format!("{what} via {} {}", alt.route.method, alt.route.path)
                    }
                };
                format!("delete {}{via}", self.label(self.target_item(op)?))
            }
            OpKind::ShowUnknown => {
                coll.show.as_ref()?;
                format!("show unknown {} {}", coll.kind, coll.unknown_id)
            }
            OpKind::Action(a) => {
                let action = coll.state.as_ref()?.actions.get(a)?;
                format!("{} {}", action.name, self.label(self.target_item(op)?))
            }
        };
        Some(format!("{text}{form}"))
    }

    pub(super) fn env(
        &self,
        item: Option<usize>,
        parent: Option<usize>,
        other: Option<usize>,
    ) -> Env {
        let mut vars = BTreeMap::new();
        vars.insert("org".to_string(), self.org.clone());
        vars.insert("ns".to_string(), self.ns.clone());
        vars.insert("unique".to_string(), self.unique.to_string());
        vars.insert("pick".to_string(), self.pick.to_string());
        for required in &self.family.requires {
            if let Some(value) = self.ctx.fixtures.given(required) {
                vars.insert(required.clone(), value.to_string());
            }
        }
        if let Some(i) = item {
            let it = &self.model.items[i];
            vars.insert("id".to_string(), it.id.clone());
            vars.insert("name".to_string(), it.name.clone().unwrap_or_default());
            for (k, v) in &it.fields {
                vars.insert(k.to_string(), v.clone());
            }
        }
        if let Some(p) = parent {
            let it = &self.model.items[p];
            vars.insert("parent".to_string(), it.id.clone());
            vars.insert(
                "parent_name".to_string(),
                it.name.clone().unwrap_or_default(),
            );
            for (k, v) in &it.fields {
                vars.insert(format!("parent_{k}"), v.clone());
            }
        }
        if let Some(o) = other {
            vars.insert("other".to_string(), self.model.items[o].id.clone());
        }
        Env(vars)
    }
}
