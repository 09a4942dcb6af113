//! A hostile reader against a shared-memory writer (fuzz/src/lib.rs, `shm_channel`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| roslite_fuzz::shm_channel(data));
