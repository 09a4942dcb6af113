//! A hostile WebAssembly guest's calls of the host's imports (fuzz/src/lib.rs,
//! `guest_imports`).

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| roslite_fuzz::guest_imports(data));
