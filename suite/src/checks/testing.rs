//! Recorded exchanges and schemas for the checks' unit tests.

use super::Schemas;
use crate::target::{Exchange, RequestRecord, ResponseRecord};

pub fn exchange(status: u16, content_type: &str, body: &str) -> Exchange {
    Exchange {
        request: RequestRecord {
            method: "GET".into(),
            url: "http://t/runs/run-1".into(),
            headers: vec![],
            body: None,
        },
        response: Ok(ResponseRecord {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            body: body.as_bytes().to_vec(),
            truncated: false,
            received: 0,
        }),
        elapsed: Default::default(),
    }
}

pub fn schemas() -> Schemas {
    Schemas::embedded().expect("embedded schemas load")
}
