//! CDR decoding of every built-in message type, generated and dynamic (fuzz/src/lib.rs, `cdr`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| roslite_fuzz::cdr(data));
