//! Parameter files and `-p` values (fuzz/src/lib.rs, `yaml_params`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| roslite_fuzz::yaml_params(data));
