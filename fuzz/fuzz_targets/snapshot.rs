//! A moving WebAssembly node's snapshot, host state and journal as a target host reads them
//! (fuzz/src/lib.rs, `snapshot`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| roslite_fuzz::snapshot(data));
