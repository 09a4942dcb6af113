//! Checks a module before it is linked, so a module that cannot work is refused with what is
//! wrong with it: malformed, another guest ABI version, an import this host does not provide,
//! an export the host needs but the module lacks.

use std::fmt;

use crate::abi;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModuleError {
    /// Not valid WebAssembly.
    Malformed(String),
    /// Imports from `roslite_vN` for another N.
    AbiVersion { found: String },
    /// An import no module of this host provides.
    UnknownImport { module: String, name: String },
    /// An export the host calls is missing.
    MissingExport { name: &'static str },
}

impl fmt::Display for ModuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed(e) => write!(f, "not a valid WebAssembly module: {e}"),
            Self::AbiVersion { found } => write!(
                f,
                "it speaks roslite guest ABI '{found}', this host speaks '{}' (ABI version {}): rebuild the node against this roslite's guest library",
                abi::IMPORT_MODULE,
                abi::ABI_VERSION
            ),
            Self::UnknownImport { module, name } => write!(
                f,
                "it imports '{module}.{name}', which this host does not provide (it provides '{}' and '{}'; see docs/wasm.md)",
                abi::IMPORT_MODULE,
                abi::WASI_MODULE
            ),
            Self::MissingExport { name } => write!(
                f,
                "it exports no '{name}': a roslite node is a WASI command (_start) linked with the roslite guest library, which exports {}, {} and {}",
                abi::EXPORT_DISPATCH,
                abi::EXPORT_ALLOC,
                abi::EXPORT_FREE
            ),
        }
    }
}

impl std::error::Error for ModuleError {}

fn wasi_names() -> &'static [&'static str] {
    macro_rules! names {
        ($($name:ident($($arg:ident: $ty:ty),* $(,)?) -> $result:ident;)*) => {
            &[$(stringify!($name)),*]
        };
    }
    crate::wasi::wasi_functions!(names)
}

/// Validates `wasm` and checks its imports and exports.
#[cfg(feature = "compiler")]
pub fn check(wasm: &[u8]) -> Result<(), ModuleError> {
    if !wasm.starts_with(b"\0asm") {
        return Err(ModuleError::Malformed(
            "it does not start with the WebAssembly magic bytes (\\0asm)".into(),
        ));
    }
    let mut validator = wasmparser::Validator::new();
    validator
        .validate_all(wasm)
        .map_err(|e| ModuleError::Malformed(e.to_string()))?;
    let mut imports = Vec::new();
    let mut exports = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        match payload.map_err(|e| ModuleError::Malformed(e.to_string()))? {
            wasmparser::Payload::ImportSection(section) => {
                for import in section {
                    let import = import.map_err(|e| ModuleError::Malformed(e.to_string()))?;
                    imports.push((import.module.to_owned(), import.name.to_owned()));
                }
            }
            wasmparser::Payload::ExportSection(section) => {
                for export in section {
                    let export = export.map_err(|e| ModuleError::Malformed(e.to_string()))?;
                    exports.push(export.name.to_owned());
                }
            }
            _ => {}
        }
    }
    check_imports_and_exports(imports.into_iter(), exports.into_iter())
}

pub fn check_imports_and_exports(
    imports: impl Iterator<Item = (String, String)>,
    exports: impl Iterator<Item = String>,
) -> Result<(), ModuleError> {
    for (module, name) in imports {
        let known = if module == abi::IMPORT_MODULE {
            abi::IMPORTS.iter().any(|i| i.name == name)
        } else if module == abi::WASI_MODULE {
            wasi_names().contains(&name.as_str())
        } else if module.starts_with(abi::IMPORT_MODULE_PREFIX) {
            return Err(ModuleError::AbiVersion { found: module });
        } else {
            false
        };
        if !known {
            return Err(ModuleError::UnknownImport { module, name });
        }
    }
    let exports: Vec<String> = exports.collect();
    for needed in [
        abi::EXPORT_MEMORY,
        abi::EXPORT_START,
        abi::EXPORT_DISPATCH,
        abi::EXPORT_ALLOC,
        abi::EXPORT_FREE,
    ] {
        if !exports.iter().any(|e| e == needed) {
            return Err(ModuleError::MissingExport { name: needed });
        }
    }
    Ok(())
}
