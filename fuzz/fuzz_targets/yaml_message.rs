//! Message text as `topic pub` reads it (fuzz/src/lib.rs, `yaml_message`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| roslite_fuzz::yaml_message(data));
