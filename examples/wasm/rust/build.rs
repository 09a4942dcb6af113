//! A 64 KiB shadow stack instead of the 1 MiB default: a node's frames are small, and every
//! guest instance of a host pays for its stack in linear memory.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_FAMILY").as_deref() == Ok("wasm") {
        println!("cargo:rustc-link-arg=-zstack-size=65536");
    }
}
