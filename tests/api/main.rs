//! Black-box tests of the `upstate` binary over HTTP, each run on SQLite and
//! on PostgreSQL. Panicking on a broken expectation is what tests are for.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod accounts;
mod admin_ui;
mod admin_users;
mod app_pages;
mod app_routes;
mod atlassian;
mod audit;
mod auth;
mod browser;
mod cli;
mod components;
mod consumers;
mod embeds;
mod errors;
mod feeds;
mod guard;
mod harness;
mod headers;
mod incidents;
mod instances;
mod jobs;
mod key_routes;
mod lifecycle;
mod maintenance;
mod migrations;
mod notifications;
mod openapi;
mod outbox;
mod pages;
mod postmortems;
mod private_pages;
mod public;
mod rate_limits;
mod receiver;
mod settings;
mod smtp;
mod status_html;
mod subscribers;
mod two_factor;
mod v2;
