//! The .msg/.srv/.action parser and what tools do with a parsed type (fuzz/src/lib.rs, `msg_parser`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| roslite_fuzz::msg_parser(data));
