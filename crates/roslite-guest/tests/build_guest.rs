//! Builds the example guests (examples/wasm/rust) for wasm32-wasip1 and checks the .wasm
//! against docs/wasm.md: every `roslite_v1` import is in the doc's import table with the
//! signature the table gives, nothing else is imported but WASI, and the exports the host
//! calls are there with their signatures. The table is read from the doc itself, so doc and
//! code cannot drift apart unnoticed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use wasmparser::{
    CompositeInnerType, ExternalKind, FuncType, Operator, Parser, Payload, TypeRef, ValType,
};

const GUESTS: [&str; 4] = [
    "talker",
    "listener",
    "add_two_ints_server",
    "add_two_ints_client",
];
const STACK_SIZE: i32 = 65536;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/roslite-guest sits two levels below the workspace root")
        .to_path_buf()
}

/// Fails with the fix when the standard library for wasm32-wasip1 is not installed.
fn require_wasm_target() {
    let output = Command::new("rustc")
        .args(["--print", "target-libdir", "--target", "wasm32-wasip1"])
        .output()
        .expect("run rustc");
    let libdir = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    assert!(
        output.status.success() && Path::new(&libdir).is_dir(),
        "the wasm32-wasip1 target is not installed; run `rustup target add wasm32-wasip1`"
    );
}

/// Builds the example guests and returns the directory holding their .wasm files.
fn build_examples() -> PathBuf {
    require_wasm_target();
    let root = workspace_root();
    // A target directory of its own: no waiting on the lock of a build running in target/.
    let target_dir = root.join("target").join("wasm-guest-test");
    let output = Command::new(env!("CARGO"))
        .current_dir(root.join("examples/wasm/rust"))
        .args(["build", "--release", "--target", "wasm32-wasip1"])
        .env("CARGO_TARGET_DIR", &target_dir)
        // The example's flags are its own (build.rs); none leak in from the test's build.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .expect("run cargo");
    assert!(
        output.status.success(),
        "building examples/wasm/rust for wasm32-wasip1 failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    target_dir.join("wasm32-wasip1").join("release")
}

/// The `roslite_v1` imports docs/wasm.md lists, with their parameter types as the table's
/// shorthand gives them (`h` an i64 handle, `p` an i32 pointer, `i32 x`, `i64 x`); every one
/// returns an i32.
fn documented_imports() -> BTreeMap<String, Vec<ValType>> {
    let doc =
        std::fs::read_to_string(workspace_root().join("docs/wasm.md")).expect("read docs/wasm.md");
    let table = doc
        .split("### Imports (`roslite_v1`)")
        .nth(1)
        .expect("docs/wasm.md has a section \"### Imports (`roslite_v1`)\"")
        .split("\n#")
        .next()
        .unwrap_or_default();
    let mut imports = BTreeMap::new();
    for row in table.lines().filter(|line| line.starts_with("| `")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let name = cells[1].trim_matches('`').to_owned();
        let arguments = cells[2].split("->").next().unwrap_or_default();
        let params = arguments
            .split(',')
            .map(str::trim)
            .filter(|argument| !argument.is_empty())
            .map(|argument| match argument.split_whitespace().next() {
                Some("h" | "i64") => ValType::I64,
                Some("p" | "i32") => ValType::I32,
                other => panic!(
                    "docs/wasm.md: import `{name}` has an argument of unknown kind {other:?}"
                ),
            })
            .collect();
        imports.insert(name, params);
    }
    assert!(
        imports.len() > 40,
        "docs/wasm.md's import table was not read (found {})",
        imports.len()
    );
    imports
}

struct Module {
    imports: Vec<(String, String, FuncType)>,
    exports: BTreeMap<String, (ExternalKind, Option<FuncType>)>,
    /// The initial value of the first global, the stack pointer.
    stack_pointer: Option<i32>,
}

fn parse(path: &Path) -> Module {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let mut types = Vec::new();
    let mut function_types = Vec::new();
    let mut imports = Vec::new();
    let mut exports = Vec::new();
    let mut stack_pointer = None;
    for payload in Parser::new(0).parse_all(&bytes) {
        match payload.expect("a valid module") {
            Payload::TypeSection(reader) => {
                for group in reader {
                    for sub_type in group.expect("a type").into_types() {
                        match sub_type.composite_type.inner {
                            CompositeInnerType::Func(func) => types.push(Some(func)),
                            _ => types.push(None),
                        }
                    }
                }
            }
            Payload::ImportSection(reader) => {
                for import in reader {
                    let import = import.expect("an import");
                    let TypeRef::Func(index) = import.ty else {
                        panic!(
                            "{}: imports {}.{}, which is not a function",
                            path.display(),
                            import.module,
                            import.name
                        );
                    };
                    let ty = types[index as usize].clone().expect("a function type");
                    function_types.push(ty.clone());
                    imports.push((import.module.to_owned(), import.name.to_owned(), ty));
                }
            }
            Payload::FunctionSection(reader) => {
                for index in reader {
                    let ty = types[index.expect("a function") as usize].clone();
                    function_types.push(ty.expect("a function type"));
                }
            }
            Payload::GlobalSection(reader) => {
                if let Some(global) = reader.into_iter().next() {
                    let global = global.expect("a global");
                    let mut operators = global.init_expr.get_operators_reader();
                    if let Ok(Operator::I32Const { value }) = operators.read() {
                        stack_pointer = Some(value);
                    }
                }
            }
            Payload::ExportSection(reader) => {
                for export in reader {
                    let export = export.expect("an export");
                    exports.push((export.name.to_owned(), export.kind, export.index));
                }
            }
            _ => {}
        }
    }
    let exports = exports
        .into_iter()
        .map(|(name, kind, index)| {
            let ty = (kind == ExternalKind::Func).then(|| function_types[index as usize].clone());
            (name, (kind, ty))
        })
        .collect();
    Module {
        imports,
        exports,
        stack_pointer,
    }
}

#[test]
fn the_example_guests_import_and_export_what_docs_wasm_md_says() {
    let documented = documented_imports();
    let release = build_examples();
    for guest in GUESTS {
        let path = release.join(format!("{guest}.wasm"));
        let module = parse(&path);
        let mut roslite_imports = Vec::new();
        for (module_name, name, ty) in &module.imports {
            match module_name.as_str() {
                "roslite_v1" => {
                    let params = documented.get(name).unwrap_or_else(|| {
                        panic!("{guest}.wasm imports roslite_v1.{name}, which docs/wasm.md does not list")
                    });
                    assert_eq!(
                        (ty.params(), ty.results()),
                        (params.as_slice(), [ValType::I32].as_slice()),
                        "{guest}.wasm imports roslite_v1.{name} with another signature than docs/wasm.md's"
                    );
                    roslite_imports.push(name.as_str());
                }
                "wasi_snapshot_preview1" => {}
                other => panic!(
                    "{guest}.wasm imports {other}.{name}: only roslite_v1 and WASI are allowed"
                ),
            }
        }
        // `log` and `release` are also libc names: they must stay imports, not bind to libc.
        for expected in [
            "context_init",
            "node_create",
            "log",
            "release",
            "executor_create",
        ] {
            assert!(
                roslite_imports.contains(&expected),
                "{guest}.wasm does not import roslite_v1.{expected}: {roslite_imports:?}"
            );
        }

        let function = |params: &[ValType], results: &[ValType]| {
            Some(FuncType::new(
                params.iter().copied(),
                results.iter().copied(),
            ))
        };
        use ValType::{I32, I64};
        let expected_exports = [
            ("memory", ExternalKind::Memory, None),
            ("_start", ExternalKind::Func, function(&[], &[])),
            (
                "roslite_guest_dispatch",
                ExternalKind::Func,
                function(&[I32, I32, I64, I64, I64, I64], &[I32]),
            ),
            (
                "roslite_guest_alloc",
                ExternalKind::Func,
                function(&[I32], &[I32]),
            ),
            (
                "roslite_guest_free",
                ExternalKind::Func,
                function(&[I32], &[]),
            ),
        ];
        for (name, kind, ty) in expected_exports {
            assert_eq!(
                module.exports.get(name),
                Some(&(kind, ty)),
                "{guest}.wasm's export {name} (all: {:?})",
                module.exports.keys().collect::<Vec<_>>()
            );
        }

        // The stack sits first in linear memory, so the stack pointer starts at its size.
        assert_eq!(
            module.stack_pointer,
            Some(STACK_SIZE),
            "{guest}.wasm is not linked with -zstack-size={STACK_SIZE} (examples/wasm/rust/build.rs)"
        );
    }
}
