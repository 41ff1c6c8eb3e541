//! Waiting for states: a precondition before the request, the state an action leads to,
//! polled within the budget.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::Value;

use super::{unjudgeable, NotReached, Outcome, TestRun};
use crate::checks::Check;
use crate::fixtures::auth_for;
use crate::target::Request;
use crate::verdict::Blocker;

impl TestRun<'_> {
    /// Polls the show endpoint of `state.show` until the pointer holds the value (or an
    /// array there holds it), within the poll budget; records `check` with the last answer.
    pub(super) async fn state_check(
        &mut self,
        state: &crate::catalog::StateExpect,
        check: &'static Check,
    ) -> bool {
        match self.poll_state(state, false).await {
            Ok(index) => self.check(check, Some(index), Ok(())),
            Err(not) => self.check(check, not.index, Err(not.message)),
        }
    }

    /// Waits for a state: `Ok(index of the answer that shows it)`, or the last answer's index
    /// with a message naming the value last seen.
    pub(super) async fn poll_state(
        &mut self,
        state: &crate::catalog::StateExpect,
        canonical: bool,
    ) -> Result<usize, NotReached> {
        let Some((_, show)) = self
            .ctx
            .catalog
            .endpoint(&state.show, &self.case.group)
            .map(|(g, e)| (g.clone(), e.clone()))
        else {
            return Err(NotReached::harness(format!(
                "catalog: unknown show endpoint {}",
                state.show
            )));
        };
        let wanted = match &state.value {
            Value::String(s) => Value::String(
                self.ctx
                    .fixtures
                    .fill_text(s, &self.scope)
                    .unwrap_or_else(|_| s.clone()),
            ),
            v => v.clone(),
        };
        // A precondition is not what the test judges: it is read in the canonical form.
        let (mut url, filled) = if canonical {
            self.canonical_url(&show).map_err(NotReached::harness)?
        } else {
            let path = self.sibling_path(&show);
            let Ok(filled) = self
                .ctx
                .fixtures
                .fill_path(&path, &self.scope, Some(&show), None)
            else {
                return Err(NotReached::harness(format!(
                    "cannot fill the path of {}",
                    state.show
                )));
            };
            (self.sibling_url(&show, &filled), filled)
        };
        for (name, value) in &state.query {
            let value = self
                .ctx
                .fixtures
                .fill_text(value, &self.scope)
                .unwrap_or_else(|_| value.clone());
            url.query_pairs_mut().append_pair(name, &value);
        }
        let item = state.item.as_ref().map(|i| {
            self.ctx
                .fixtures
                .fill_text(i, &self.scope)
                .unwrap_or_else(|_| i.clone())
        });
        let deadline = Instant::now() + self.ctx.poll_budget;
        let mut delay = Duration::from_millis(50);
        loop {
            let index = self
                .send(Request::new(Method::GET, url.clone(), auth_for(&filled)))
                .await;
            let seen = self.ex(index).json().ok().and_then(|d| match &item {
                Some(id) => d
                    .get("data")?
                    .as_array()?
                    .iter()
                    .find(|i| {
                        crate::fixtures::value_string(i.get("id")).as_deref() == Some(id.as_str())
                    })?
                    .pointer(&state.pointer)
                    .cloned(),
                None => d.pointer(&state.pointer).cloned(),
            });
            let holds = match &seen {
                Some(Value::Array(items)) => items.iter().any(|i| {
                    i == &wanted
                        || i.as_object()
                            .is_some_and(|o| o.values().any(|v| v == &wanted))
                }),
                Some(v) => v == &wanted,
                None => false,
            };
            if holds {
                return Ok(index);
            }
            // a refused request (the run's deadline) will not change by waiting
            let refused = matches!(
                self.ex(index).response,
                Err(crate::target::TransportError::Refused(_))
            );
            if refused || Instant::now() + delay > deadline {
                let last = seen
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "nothing".into());
                return Err(NotReached {
                    index: Some(index),
                    message: format!(
                        "expected {} at {} of {}, last seen {last} (polled for {} s)",
                        wanted,
                        state.pointer,
                        state.show,
                        self.ctx.poll_budget.as_secs()
                    ),
                    last,
                });
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(1));
        }
    }

    /// Reads the current values an `echo` update sends back; a show that fails blocks the
    /// test (the update would otherwise change something, or send nothing).
    pub(super) async fn echo(&mut self) -> Result<(), Outcome> {
        let Some(echo) = self.endpoint.echo.clone() else {
            return Ok(());
        };
        let Some((_, show)) = self
            .ctx
            .catalog
            .endpoint(&echo.show, &self.case.group)
            .map(|(g, e)| (g.clone(), e.clone()))
        else {
            return Err(Outcome::Error(format!(
                "catalog: unknown echo show {}",
                echo.show
            )));
        };
        let (url, filled) = self.canonical_url(&show).map_err(Outcome::Error)?;
        let index = self
            .send(Request::new(Method::GET, url, auth_for(&filled)))
            .await;
        let current = match (self.ex(index).is_success(), self.ex(index).json()) {
            (true, Ok(doc)) => doc,
            _ => {
                if let Some(why) = unjudgeable(self.ex(index)) {
                    return Err(Outcome::Error(why));
                }
                let needed = "the current values it sends back".to_string();
                let blocker = self.ctx.blocker(needed, self.ex(index), None);
                return Err(self.blocked_or_absent(blocker, index).await);
            }
        };
        let mut values = serde_json::Map::new();
        for name in &echo.attributes {
            if let Some(v) = current.pointer(&format!("/data/attributes/{name}")) {
                values.insert(name.clone(), v.clone());
            }
        }
        self.echoed = Some(Value::Object(values));
        Ok(())
    }

    /// Waits for the state the request needs (a run awaiting confirmation before apply); a
    /// state never reached blocks the test with the last state seen.
    pub(super) async fn precondition(&mut self) -> Result<(), Outcome> {
        let Some(state) = self.endpoint.precondition.clone() else {
            return Ok(());
        };
        match self.poll_state(&state, true).await {
            Ok(_) => Ok(()),
            Err(NotReached {
                index: Some(index),
                last,
                ..
            }) => {
                if let Some(why) = unjudgeable(self.ex(index)) {
                    return Err(Outcome::Error(why));
                }
                Err(Outcome::Blocked(Blocker {
                    needed: format!("{} = {} first", state.pointer, state.value),
                    request: match state.show.contains("::") {
                        true => format!("polling {}", state.show),
                        false => format!("polling {}::{}", self.case.group, state.show),
                    },
                    answer: format!("{last} until the poll budget ran out"),
                    see: None,
                }))
            }
            Err(not) => Err(Outcome::Error(not.message)),
        }
    }
}
