//! Prepares a module for snapshots (docs/migration.md): compilers export no mutable global (the
//! C stack pointer, Asyncify's state), yet a snapshot must read and write every one. So before
//! a module is compiled, every global it defines is exported as `roslite_global_<i>` (`i` its
//! index among the module's own globals, after the imported ones), and the SHA-256 of the module
//! as given is added as four exported constant `i64` globals `roslite_module_hash_<0..3>`: a
//! `.cwasm`, which keeps no trace of the `.wasm` it came from, still says which module it is,
//! and a snapshot names the module it belongs to by that hash.
//!
//! The pass is deterministic (the same `.wasm` gives the same bytes on every machine) and
//! idempotent (an instrumented module is returned unchanged).

use sha2::{Digest, Sha256};
#[cfg(feature = "instrument")]
use wasm_encoder::reencode::{Reencode, RoundtripReencoder};
#[cfg(feature = "instrument")]
use wasmparser::{Parser, Payload, TypeRef};

/// The export naming defined global `i`.
pub const GLOBAL_EXPORT_PREFIX: &str = "roslite_global_";
/// The exports carrying the module hash, 8 bytes each (little-endian), in order.
pub const HASH_EXPORT_PREFIX: &str = "roslite_module_hash_";

/// The module hash: SHA-256 of the `.wasm` as the user gave it (before instrumentation).
pub type ModuleHash = [u8; 32];

pub fn module_hash(wasm: &[u8]) -> ModuleHash {
    Sha256::digest(wasm).into()
}

/// The name of the export of defined global `index`.
pub fn global_export(index: u32) -> String {
    format!("{GLOBAL_EXPORT_PREFIX}{index}")
}

/// The name of the export of hash part `i` (0..4).
pub fn hash_export(i: usize) -> String {
    format!("{HASH_EXPORT_PREFIX}{i}")
}

/// The hash as the four `i64` values of its globals.
pub fn hash_parts(hash: &ModuleHash) -> [i64; 4] {
    std::array::from_fn(|i| i64::from_le_bytes(hash[i * 8..i * 8 + 8].try_into().expect("8")))
}

/// The hash back from its four parts.
pub fn hash_from_parts(parts: [i64; 4]) -> ModuleHash {
    let mut hash = [0; 32];
    for (i, part) in parts.iter().enumerate() {
        hash[i * 8..i * 8 + 8].copy_from_slice(&part.to_le_bytes());
    }
    hash
}

/// `wasm` with its globals and its hash exported; `wasm` itself if it already is.
#[cfg(feature = "instrument")]
pub fn instrument(wasm: &[u8]) -> Result<Vec<u8>, String> {
    let hash = module_hash(wasm);
    let mut imported_globals = 0u32;
    let mut defined_globals = 0u32;
    let mut exported = std::collections::HashSet::new();
    for payload in Parser::new(0).parse_all(wasm) {
        match payload.map_err(|e| e.to_string())? {
            Payload::ImportSection(imports) => {
                for import in imports {
                    if matches!(import.map_err(|e| e.to_string())?.ty, TypeRef::Global(_)) {
                        imported_globals += 1;
                    }
                }
            }
            Payload::GlobalSection(globals) => defined_globals = globals.count(),
            Payload::ExportSection(exports) => {
                for export in exports {
                    exported.insert(export.map_err(|e| e.to_string())?.name.to_owned());
                }
            }
            _ => {}
        }
    }
    if exported.contains(&hash_export(0)) {
        return Ok(wasm.to_vec());
    }

    let mut module = wasm_encoder::Module::new();
    let mut globals_written = false;
    let mut exports_written = false;
    let hash_globals = |section: &mut wasm_encoder::GlobalSection| {
        for part in hash_parts(&hash) {
            section.global(
                wasm_encoder::GlobalType {
                    val_type: wasm_encoder::ValType::I64,
                    mutable: false,
                    shared: false,
                },
                &wasm_encoder::ConstExpr::i64_const(part),
            );
        }
    };
    let new_exports = |section: &mut wasm_encoder::ExportSection| {
        for i in 0..defined_globals {
            section.export(
                &format!("{GLOBAL_EXPORT_PREFIX}{i}"),
                wasm_encoder::ExportKind::Global,
                imported_globals + i,
            );
        }
        for i in 0..4 {
            section.export(
                &hash_export(i),
                wasm_encoder::ExportKind::Global,
                imported_globals + defined_globals + i as u32,
            );
        }
    };
    let mut reencoder = RoundtripReencoder;
    for payload in Parser::new(0).parse_all(wasm) {
        let payload = payload.map_err(|e| e.to_string())?;
        match &payload {
            Payload::GlobalSection(globals) => {
                let mut section = wasm_encoder::GlobalSection::new();
                reencoder
                    .parse_global_section(&mut section, globals.clone())
                    .map_err(|e| e.to_string())?;
                hash_globals(&mut section);
                module.section(&section);
                globals_written = true;
                continue;
            }
            Payload::ExportSection(exports) => {
                if !globals_written {
                    // A module without globals of its own: the section goes before exports.
                    let mut section = wasm_encoder::GlobalSection::new();
                    hash_globals(&mut section);
                    module.section(&section);
                    globals_written = true;
                }
                let mut section = wasm_encoder::ExportSection::new();
                for export in exports.clone() {
                    let export = export.map_err(|e| e.to_string())?;
                    section.export(
                        export.name,
                        reencoder
                            .export_kind(export.kind)
                            .map_err(|e| e.to_string())?,
                        export.index,
                    );
                }
                new_exports(&mut section);
                module.section(&section);
                exports_written = true;
                continue;
            }
            _ => {}
        }
        if let Some((id, range)) = payload.as_section() {
            module.section(&wasm_encoder::RawSection {
                id,
                data: &wasm[range],
            });
        }
    }
    if !exports_written {
        return Err("the module exports nothing (not even its memory)".into());
    }
    Ok(module.finish())
}

#[cfg(all(test, feature = "instrument"))]
mod tests {
    use super::*;

    fn exports(wasm: &[u8]) -> Vec<String> {
        let mut names = Vec::new();
        for payload in Parser::new(0).parse_all(wasm) {
            if let Payload::ExportSection(exports) = payload.unwrap() {
                names.extend(exports.into_iter().map(|e| e.unwrap().name.to_owned()));
            }
        }
        names
    }

    const GUEST: &str = r#"(module
        (import "env" "g" (global $imported i32))
        (global $sp (mut i32) (i32.const 1024))
        (global $state (mut i64) (i64.const 7))
        (memory (export "memory") 1)
        (func (export "_start") (global.set $sp (i32.const 5))))"#;

    #[test]
    fn every_defined_global_and_the_hash_are_exported() {
        let wasm = wat::parse_str(GUEST).unwrap();
        let out = instrument(&wasm).unwrap();
        wasmparser::Validator::new().validate_all(&out).unwrap();
        let names = exports(&out);
        for name in [
            "memory",
            "_start",
            "roslite_global_0",
            "roslite_global_1",
            "roslite_module_hash_0",
            "roslite_module_hash_3",
        ] {
            assert!(
                names.iter().any(|n| n == name),
                "{name} missing from {names:?}"
            );
        }
        assert!(!names.iter().any(|n| n == "roslite_global_2"), "{names:?}");
        // Deterministic and idempotent.
        assert_eq!(instrument(&wasm).unwrap(), out);
        assert_eq!(instrument(&out).unwrap(), out);
    }

    #[test]
    fn the_hash_survives_its_split_into_globals() {
        let hash = module_hash(b"\0asm");
        assert_eq!(hash_from_parts(hash_parts(&hash)), hash);
    }

    #[test]
    fn a_module_without_globals_gets_a_global_section_before_its_exports() {
        let wasm = wat::parse_str(r#"(module (memory (export "memory") 1))"#).unwrap();
        let out = instrument(&wasm).unwrap();
        wasmparser::Validator::new().validate_all(&out).unwrap();
        assert!(exports(&out).contains(&"roslite_module_hash_0".to_owned()));
    }
}
