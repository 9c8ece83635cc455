//! Tells the test suite whether a PostgreSQL server was named for it, and
//! whether the long probes and the Chromium journeys are asked for. Without
//! them, those tests are compiled as ignored, so the run's own summary says
//! "N ignored" instead of counting skipped tests as passed.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(postgres_tests)");
    println!("cargo::rustc-check-cfg=cfg(long_tests)");
    println!("cargo::rustc-check-cfg=cfg(browser_tests)");
    println!("cargo::rerun-if-env-changed=UPSTATE_TEST_POSTGRES_URL");
    println!("cargo::rerun-if-env-changed=UPSTATE_TEST_LONG");
    println!("cargo::rerun-if-env-changed=UPSTATE_TEST_BROWSER");
    if std::env::var("UPSTATE_TEST_POSTGRES_URL").is_ok_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=postgres_tests");
    }
    if std::env::var("UPSTATE_TEST_LONG").is_ok_and(|v| v == "1") {
        println!("cargo::rustc-cfg=long_tests");
    }
    if std::env::var("UPSTATE_TEST_BROWSER").is_ok_and(|v| v == "1") {
        println!("cargo::rustc-cfg=browser_tests");
    }
}
