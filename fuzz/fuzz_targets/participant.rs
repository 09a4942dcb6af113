//! A participant's whole receive side, with its state (fuzz/src/lib.rs, `participant`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| roslite_fuzz::participant(data));
