//! A token's effects (`expect.secret`, TFE level): its secret answered once by its create,
//! the read it is meant for authenticated with it, and refused after its delete.

use reqwest::Method;
use serde_json::Value;

use super::TestRun;
use crate::checks::{self as c};
use crate::fixtures::auth_for;
use crate::target::{Request, Secret};

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

    /// Around a token's delete: the read it is meant for (with the secret its create answered,
    /// kept in the fixture) is authenticated before the delete (`before`; a token that never
    /// worked proves nothing by failing afterwards) and refused after it.
    pub(super) async fn token_around_delete(&mut self, before: bool) {
        let (Some(secret), Some(kind)) = (
            self.endpoint.expect.secret.clone(),
            self.endpoint.resource.clone(),
        ) else {
            return;
        };
        let Some(reads) = secret.reads else { return };
        let token = self
            .scope
            .get(&kind)
            .and_then(|made| c::lifecycle::issued_secret(&made.document, &secret.pointer).ok());
        let Some(token) = token else { return };
        if let Some(index) = self.read_with(&reads, token).await {
            let what = format!("GET {reads}");
            let result = c::lifecycle::authenticates(self.ex(index).status(), before, &what);
            self.check(&c::TFE_TOKEN_AUTHENTICATES, Some(index), result);
        }
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
