//! Black-box tests of the `upstate` binary over HTTP, each run on SQLite and
//! on PostgreSQL. Panicking on a broken expectation is what tests are for.
#![allow(clippy::unwrap_used, clippy::expect_used)]

/// The tests' own HTTP clients share reqwest with the jobs crate, whose TLS
/// provider (ring) a process sets once; set it before any test makes one.
#[ctor::ctor(unsafe)]
fn tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

mod support;

mod accounts;
mod admin_ui;
mod admin_users;
mod app_pages;
mod app_routes;
mod atlassian;
mod audiences;
mod audit;
mod auth;
mod browser;
mod cli;
mod comments;
mod components;
mod consumers;
mod contract;
mod crash;
mod dns_server;
mod doors;
mod embeds;
mod errors;
mod feeds;
mod guard;
mod harness;
mod headers;
mod importers;
mod incidents;
mod instances;
mod integrations;
mod jobs;
mod key_routes;
mod lifecycle;
mod maintenance;
mod measurements;
mod migrations;
mod monitors;
mod notifications;
mod openapi;
mod outage;
mod outbox;
mod page_networks;
mod pages;
mod past;
mod postmortems;
mod private_pages;
mod public;
mod public_layout;
mod push;
mod rate_limits;
mod receiver;
mod remote_cli;
mod roles;
mod scheduler;
mod second_day;
mod secrets;
mod selftest;
mod settings;
mod setup_as_code;
mod smtp;
mod sso;
mod static_copy;
mod status_html;
mod storm;
mod subscribers;
mod third_party;
mod transfer;
mod two_factor;
mod v2;
mod viewers;
