//! The datagram receive path (fuzz/src/lib.rs, `rtps_message`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| roslite_fuzz::rtps_message(data));
