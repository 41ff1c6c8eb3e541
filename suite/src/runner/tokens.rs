//! A token's effects (`expect.secret`, TFE level): its secret answered once by its create,
//! the read it is meant for authenticated with it, and refused after its delete.

use reqwest::Method;
use serde_json::Value;

use super::{Outcome, TestRun};
use crate::catalog::Kind;
use crate::checks::{self as c};
use crate::fixtures::auth_for;
use crate::target::{Request, Secret};
use crate::verdict::{Blocker, Profile};

impl TestRun<'_> {
    /// After a token's create (`main`, answering `doc`; `shown`: a show of it, if sent).
    pub(super) async fn token_created(&mut self, main: usize, doc: &Value, shown: Option<usize>) {
        let Some(secret) = self.endpoint.expect.secret.clone() else {
            return;
        };
        let issued = c::lifecycle::issued_secret(doc, &secret.pointer);
        let token = issued.as_ref().ok().cloned();
        self.check(&c::TFE_TOKEN_SECRET, Some(main), issued.map(|_| ()));
        if let Some(index) = shown.filter(|i| self.ex(*i).is_success()) {
            let shown = self.ex(index).json().unwrap_or_default();
            let result = c::lifecycle::secret_hidden(&shown, &secret.pointer);
            self.check(&c::TFE_TOKEN_SECRET, Some(index), result);
        }
        if let (Some(reads), Some(token)) = (secret.reads, token) {
            if let Some(index) = self.read_with(&reads, token).await {
                let what = format!("GET {reads}");
                let result = c::lifecycle::authenticates(self.ex(index).status(), true, &what);
                self.check(&c::TFE_TOKEN_AUTHENTICATES, Some(index), result);
            }
        }
    }

    /// Before a token's delete: the read it is meant for (with the secret its create answered,
    /// kept in the fixture) is authenticated (a token that never worked proves nothing by
    /// failing afterwards). At tfe, a create that answered no secret blocks the delete: its
    /// effect cannot be seen, and the create's own test fails on the missing secret.
    pub(super) async fn token_before_delete(&mut self) -> Result<(), Outcome> {
        let Some((reads, pointer)) = self.token_read() else {
            return Ok(());
        };
        match self.issued_token(&pointer) {
            Some(token) => {
                self.token_reads(&reads, token, true).await;
                Ok(())
            }
            None if self.ctx.profile == Profile::Tfe => {
                let (request, see) = self.own_create().unzip();
                Err(Outcome::Blocked(Blocker {
                    needed: "the token's secret, to see the delete revoke it".to_string(),
                    request: request.unwrap_or_else(|| "the token's create".to_string()),
                    answer: format!("without a secret at {pointer}"),
                    see,
                    hint: None,
                }))
            }
            None => Ok(()),
        }
    }

    /// After a token's delete: the read it was meant for is refused.
    pub(super) async fn token_after_delete(&mut self) {
        let Some((reads, pointer)) = self.token_read() else {
            return;
        };
        if let Some(token) = self.issued_token(&pointer) {
            self.token_reads(&reads, token, false).await;
        }
    }

    /// The read a token of this endpoint is meant for, and where its create answers its secret.
    fn token_read(&self) -> Option<(String, String)> {
        let secret = self.endpoint.expect.secret.as_ref()?;
        Some((secret.reads.clone()?, secret.pointer.clone()))
    }

    /// The secret the fixture's create answered at `pointer`.
    fn issued_token(&self, pointer: &str) -> Option<String> {
        let kind = self.endpoint.resource.as_deref()?;
        let made = self.scope.get(kind)?;
        c::lifecycle::issued_secret(&made.document, pointer).ok()
    }

    /// Whether GET `reads` with `token` is authenticated as `expected` (`tfe.token-authenticates`),
    /// read again within the consistency window (`crate::patience`) while it is not: a token
    /// may be honoured, or revoked, a moment after its create or delete.
    async fn token_reads(&mut self, reads: &str, token: String, expected: bool) {
        let mut patience = self.ctx.target.patience();
        let what = format!("GET {reads}");
        while let Some(index) = self.read_with(reads, token.clone()).await {
            let result = c::lifecycle::authenticates(self.ex(index).status(), expected, &what);
            let held = result.is_ok();
            if held || !patience.again().await {
                let result = c::waited(result, patience.done(held));
                self.check(&c::TFE_TOKEN_AUTHENTICATES, Some(index), result);
                return;
            }
        }
    }

    /// The create of this group that makes this endpoint's resource: its request line and
    /// its test, in this test's form.
    fn own_create(&self) -> Option<(String, String)> {
        let kind = self.endpoint.resource.as_deref()?;
        let (group, create) = self.ctx.catalog.endpoints().find(|(g, e)| {
            g.group == self.case.group
                && e.kind == Kind::Create
                && e.resource.as_deref() == Some(kind)
        })?;
        let test = format!(
            "{}::{}::{}",
            group.group,
            create.id,
            self.case.variant.as_str()
        );
        Some((format!("{} {}", create.method, create.path), test))
    }

    /// Sends GET `reads` (canonical form) with an issued token.
    async fn read_with(&mut self, reads: &str, token: String) -> Option<usize> {
        let filled = self
            .ctx
            .fixtures
            .fill_path(reads, &self.scope, Some(self.endpoint), None)
            .ok()?;
        let url = self.ctx.target.api_url(&filled);
        let request =
            Request::new(Method::GET, url, auth_for(&filled)).with_issued_token(Secret::new(token));
        Some(self.send(request).await)
    }
}
