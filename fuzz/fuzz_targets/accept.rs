//! Any `Accept`, `Accept-Language` or `Accept-Encoding` value: every weight
//! is a number from 0 to 1, so no value can outrank a real preference, and
//! language tags resolve to a dictionary or to none.
#![no_main]

use libfuzzer_sys::fuzz_target;
use upstate_core::i18n::Lang;
use upstate_core::input::weighted;

fuzz_target!(|value: &str| {
    for (token, q) in weighted(value) {
        assert!((0.0..=1.0).contains(&q), "weight {q} for {token:?}");
        assert!(!token.contains(','), "a token holds no separator");
        let _ = Lang::parse(token);
    }
});
