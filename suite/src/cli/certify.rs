//! The options of `conform certify` and `conform verify`.

use std::path::PathBuf;

use clap::Args;

use super::RunArgs;

/// Options of `conform certify`: a suite run (its options are a run's; `--require all` is
/// implied, `--profile` is `tfe` unless given), or the reports of its shards (`--from`), made
/// into one bundle.
#[derive(Debug, Args)]
pub struct CertifyArgs {
    /// Run nothing: merge the reports folders of the shards of one run (`--partition
    /// hash:M/N`, one folder per shard) into the bundle.
    #[arg(long, value_name = "DIR", num_args = 1..)]
    pub from: Vec<PathBuf>,
    /// The folder the bundle is written to (its contents replaced); `DIR.tar` holds the same
    /// files.
    #[arg(long, value_name = "DIR", default_value = "reports/certificate")]
    pub bundle: PathBuf,
    /// The options of the run.
    #[command(flatten)]
    pub run: RunArgs,
}

/// Options of `conform verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The bundle `conform certify` wrote: its folder, or its `.tar`.
    #[arg(value_name = "BUNDLE")]
    pub bundle: PathBuf,
}
