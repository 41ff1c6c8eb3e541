//! `conform`: a conformance suite and contract checker for the Infrastructure Automation
//! Service API (`../shared/spec`), a Terraform Cloud/Enterprise-style HTTP API.
//!
//! The flow of one run: [`catalog`] (the data in `cases/`) -> [`harness`] (one libtest-mimic
//! trial per endpoint and path variant) -> [`runner`] (fixtures from [`fixtures`], requests
//! through [`target`], [`checks`] against `schemas/`) -> [`verdict`] -> [`report`].
//! Data flows one way: nothing in `checks` sends requests, nothing in `report` knows HTTP.
#![warn(missing_docs)]

pub mod attribution;
pub mod catalog;
pub mod certify;
pub mod checks;
pub mod cli;
pub mod clock;
pub mod compare;
pub mod diff;
pub mod exit;
pub mod fixtures;
pub mod glob;
pub mod harness;
pub mod ledger;
pub mod openapi;
pub mod pages;
pub mod partition;
pub mod patience;
pub mod peer;
pub mod plan;
pub mod precision;
pub mod proxy;
pub mod removal;
pub mod report;
pub mod runner;
pub mod safety;
pub mod selftest;
pub mod sequences;
pub mod serve;
pub mod settings;
pub mod slots;
pub mod sweep;
pub mod tarball;
pub mod target;
pub mod verdict;
pub mod waivers;
