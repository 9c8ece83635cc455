//! The `upstate` binary's own pieces, as a library: its configuration and
//! the service it runs (HTTP server and job loops on one database). The
//! binary (`main.rs`) adds the process around them (command line, logging,
//! signals); the API tests run the same service inside the test process,
//! which costs no process start and lets a test move its clock.

pub mod config;
pub mod server_key;
pub mod service;
