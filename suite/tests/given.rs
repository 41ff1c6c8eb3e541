//! A given resource is read with every show that can find it (issue 41 item 3): a workspace
//! given with `--fixture` is read with TFE's own show before the administrator's, so a server
//! without the administrator route (or a run without its token) is not warned that the
//! workspace's "show answered 404" while its own show answers 200.

use std::process::Command;

use crate::support::processes::{self, text, Served};

fn a_given_workspace_is_read_with_its_own_show_before_the_administrators() {
    let tokens = ("given-user-token", "given-admin-token");
    let served = Served::with_args(&[
        "--token",
        tokens.0,
        "--admin-token",
        tokens.1,
        "--seed-organization",
        "given",
        "--seed-workspace",
        "w1",
        "--fault",
        "drop-route=GET /admin/workspaces/:id",
    ]);
    let workspace = served
        .banner
        .iter()
        .find_map(|l| l.trim().strip_prefix("seeded workspace: "))
        .expect("the banner names the seeded workspace")
        .to_string();
    let dir = processes::scratch("given", "own-show");
    let out = Command::new(env!("CARGO_BIN_EXE_conform"))
        .args(["--target", &served.url, "--token", tokens.0])
        .args(["--admin-token", tokens.1, "--organization", "given"])
        .args(["--fixture", &format!("workspace={workspace}")])
        .args(["--group", "variables", "-q", "--reports"])
        .arg(&dir)
        .output()
        .expect("a run");
    let said = text(&out);
    assert!(!said.contains("is taken as given"), "{said}");
    assert_eq!(out.status.code(), Some(0), "{said}");
}

/// This file's tests.
pub fn tests() -> Vec<crate::harness::Test> {
    crate::harness::tests![a_given_workspace_is_read_with_its_own_show_before_the_administrators]
}
