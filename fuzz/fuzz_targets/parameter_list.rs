//! SPDP/SEDP/WLP/inline-QoS parameter lists without an RTPS frame (fuzz/src/lib.rs, `parameter_list`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| roslite_fuzz::parameter_list(data));
