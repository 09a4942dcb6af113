//! Filled by `cargo xtask codegen`.
pub static INTERFACE_FILES: &[crate::InterfaceFile] = &[];
