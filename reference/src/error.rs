//! The one error type of the reference: every failure becomes a JSON:API error document.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The media type of every JSON:API answer.
pub const JSONAPI: &str = "application/vnd.api+json";

/// An error answer. Each variant names its status.
#[derive(Debug, Clone)]
pub enum ApiError {
    /// `400 Bad Request`: a missing required filter, a no-op admin action.
    BadRequest(String),
    /// `401 Unauthorized`: no token or a wrong one.
    Unauthorized,
    /// `403 Forbidden`.
    Forbidden(String),
    /// `404 Not Found`: unknown resource or route (also used for missing rights, as TFE does).
    NotFound(String),
    /// `405 Method Not Allowed`.
    MethodNotAllowed,
    /// `409 Conflict`: a transition that the current state does not allow.
    Conflict(String),
    /// `412 Precondition Failed`.
    Precondition(String),
    /// `423 Locked`: a lock already held (fault `lock-conflict-423`; TFE answers 409).
    Locked(String),
    /// `413 Payload Too Large`.
    TooLarge,
    /// `415 Unsupported Media Type`: a body sent with a media type that is not JSON.
    UnsupportedMediaType(String),
    /// `422 Unprocessable Entity`: malformed body, wrong type, missing or invalid attribute.
    Invalid {
        /// What is wrong.
        detail: String,
        /// A JSON pointer into the request document, when one attribute is at fault.
        pointer: Option<String>,
    },
    /// `429 Too Many Requests`.
    RateLimited,
    /// `500 Internal Server Error`.
    Internal(String),
}

impl ApiError {
    /// A 404 for a resource kind and id.
    pub fn not_found(what: &str, id: &str) -> Self {
        ApiError::NotFound(format!("{what} {id} not found"))
    }

    /// A 422 without a pointer.
    pub fn invalid(detail: impl Into<String>) -> Self {
        ApiError::Invalid {
            detail: detail.into(),
            pointer: None,
        }
    }

    /// A 422 about one attribute.
    pub fn attribute(name: &str, detail: impl Into<String>) -> Self {
        ApiError::Invalid {
            detail: detail.into(),
            pointer: Some(format!("/data/attributes/{name}")),
        }
    }

    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Precondition(_) => StatusCode::PRECONDITION_FAILED,
            ApiError::Locked(_) => StatusCode::LOCKED,
            ApiError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::Invalid { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn title(&self) -> &'static str {
        match self {
            ApiError::BadRequest(_) => "bad request",
            ApiError::Unauthorized => "unauthorized",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::NotFound(_) => "not found",
            ApiError::MethodNotAllowed => "method not allowed",
            ApiError::Conflict(_) => "transition not allowed",
            ApiError::Precondition(_) => "precondition failed",
            ApiError::Locked(_) => "locked",
            ApiError::TooLarge => "payload too large",
            ApiError::UnsupportedMediaType(_) => "unsupported media type",
            ApiError::Invalid { .. } => "invalid attribute",
            ApiError::RateLimited => "too many requests",
            ApiError::Internal(_) => "internal server error",
        }
    }

    fn detail(&self) -> String {
        match self {
            ApiError::BadRequest(d)
            | ApiError::Forbidden(d)
            | ApiError::NotFound(d)
            | ApiError::Conflict(d)
            | ApiError::Precondition(d)
            | ApiError::Locked(d)
            | ApiError::UnsupportedMediaType(d)
            | ApiError::Internal(d) => d.clone(),
            ApiError::Invalid { detail, .. } => detail.clone(),
            ApiError::Unauthorized => "a valid API token is required".into(),
            ApiError::MethodNotAllowed => "this route does not accept that method".into(),
            ApiError::TooLarge => "the request body is over the size limit".into(),
            ApiError::RateLimited => "You have exceeded the API's rate limit.".into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let mut error = json!({
            "status": status.as_u16().to_string(),
            "title": self.title(),
            "detail": self.detail(),
        });
        if let ApiError::Invalid {
            pointer: Some(p), ..
        } = &self
        {
            error["source"] = json!({ "pointer": p });
        }
        let body = json!({ "errors": [error] }).to_string();
        let mut res = (status, body).into_response();
        res.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(JSONAPI));
        res
    }
}

/// The result type of handlers and store operations.
pub type ApiResult<T> = Result<T, ApiError>;
