//! The `.idl` files of every interface package the ROS 2 peers ship (the PyPI Kilted wheels
//! in `./.venv`, which `cargo xtask test` installs): each parses, and the RIHS01 hash computed
//! from it equals the hash in the package's `.json` type description and, where rosidl was
//! given a `.msg`/`.srv`/`.action` file, the hash computed from that file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use roslite_msg_gen::ast::{BaseType, InterfaceKind, Primitive, TypeName};
use roslite_msg_gen::hash::type_hash;
use roslite_msg_gen::registry::{InterfaceSet, SourceFormat};

/// The share directory of the venv's ROS 2 packages, as its Python says (`sys.prefix/share`,
/// where the wheels put `share/<package>/...`, the `AMENT_PREFIX_PATH` layout).
fn venv_share() -> PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `cargo xtask test`, which installs the ROS 2 peers",
        python.display()
    );
    let out = Command::new(&python)
        .args([
            "-c",
            "import os, sys, ament_index_python; print(os.path.join(sys.prefix, 'share'))",
        ])
        .output()
        .expect("run the venv's python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let share = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    assert!(
        share.join("test_msgs/msg/KeyedLong.idl").is_file(),
        "{}",
        share.display()
    );
    share
}

/// Every interface file of `extension` under `share/<package>/{msg,srv,action}/`.
fn files(share: &Path, format: SourceFormat) -> Vec<(String, InterfaceKind, String, PathBuf)> {
    let mut out = Vec::new();
    let mut packages: Vec<PathBuf> = std::fs::read_dir(share)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    packages.sort();
    for package_dir in packages {
        let package = package_dir
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        for kind in [
            InterfaceKind::Msg,
            InterfaceKind::Srv,
            InterfaceKind::Action,
        ] {
            let Ok(entries) = std::fs::read_dir(package_dir.join(kind.as_str())) else {
                continue;
            };
            let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
            paths.sort();
            for path in paths {
                if path.extension().and_then(|e| e.to_str()) == Some(format.extension(kind)) {
                    let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
                    out.push((package.clone(), kind, name, path));
                }
            }
        }
    }
    out
}

/// A set of every file of `format` under `share`; every one must parse.
fn load(share: &Path, format: SourceFormat) -> InterfaceSet {
    let mut set = InterfaceSet::new();
    let mut errors = Vec::new();
    for (package, kind, name, path) in files(share, format) {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.display().to_string();
        let added = match format {
            SourceFormat::Idl => set.add_idl_source(&package, kind, &name, &text, &file),
            SourceFormat::Msg => set.add_source(&package, kind, &name, &text, &file),
        };
        if let Err(e) = added {
            errors.push(e.to_string());
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    set
}

/// `type_hashes` of one `.json` type description: type name to `RIHS01_...`.
fn json_hashes(path: &Path) -> BTreeMap<String, String> {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    json["type_hashes"]
        .as_array()
        .unwrap_or_else(|| panic!("no type_hashes in {}", path.display()))
        .iter()
        .map(|entry| {
            (
                entry["type_name"].as_str().unwrap().to_owned(),
                entry["hash_string"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn every_idl_of_the_peers_hashes_as_its_json_and_its_msg() {
    let share = venv_share();
    let from_idl = load(&share, SourceFormat::Idl);
    from_idl.check().unwrap_or_else(|e| panic!("{e}"));
    let from_msg = load(&share, SourceFormat::Msg);

    let idl_files = files(&share, SourceFormat::Idl);
    let mut mismatches = Vec::new();
    let (mut against_json, mut against_msg) = (0, 0);
    for (package, kind, name, path) in &idl_files {
        let json = path.with_extension("json");
        assert!(json.is_file(), "{} has no .json beside it", path.display());
        let with_msg = from_msg
            .interface(&TypeName::new(package, *kind, name))
            .is_some();
        for (type_name, expected) in json_hashes(&json) {
            let parsed = TypeName::parse(&type_name).unwrap();
            match type_hash(&from_idl, &parsed) {
                Ok(actual) if actual == expected => {}
                Ok(actual) => mismatches.push(format!(
                    "{type_name} from .idl: {actual}, .json says {expected}"
                )),
                Err(e) => mismatches.push(format!("{type_name} from .idl: {e}")),
            }
            against_json += 1;
            if with_msg {
                match type_hash(&from_msg, &parsed) {
                    Ok(actual) if actual == expected => {}
                    Ok(actual) => mismatches.push(format!(
                        "{type_name} from .{}: {actual}, .json says {expected}",
                        kind.extension()
                    )),
                    Err(e) => mismatches.push(format!("{type_name} from .msg: {e}")),
                }
                against_msg += 1;
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {against_json} hashes differ:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    // 166 .idl files in the Kilted wheels; only test_msgs' four keyed types lack a .msg.
    assert!(
        idl_files.len() >= 160,
        "only {} .idl files",
        idl_files.len()
    );
    assert!(against_json >= 550, "only {against_json} hashes checked");
    eprintln!("{against_json} hashes from .idl, {against_msg} from .msg/.srv/.action, all equal to the .json");
    assert!(
        against_json - against_msg <= 8,
        "{against_json} hashes against .json, only {against_msg} against .msg"
    );
}

/// A share directory as tools load it: the `.msg` of an interface where there is one, the
/// `.idl` otherwise, and the IDL-only keyed types of test_msgs with their keys.
#[test]
fn share_dirs_read_idl_where_there_is_no_msg() {
    let share = venv_share();
    let mut set = InterfaceSet::new();
    set.add_share_dir(&share).unwrap_or_else(|e| panic!("{e}"));
    set.check().unwrap_or_else(|e| panic!("{e}"));
    let tn = |s: &str| TypeName::parse(s).unwrap();
    assert_eq!(
        set.format(&tn("test_msgs/msg/BasicTypes")),
        Some(SourceFormat::Msg)
    );
    let keyed = [
        ("test_msgs/msg/KeyedLong", vec!["key"]),
        ("test_msgs/msg/KeyedString", vec!["key"]),
        (
            "test_msgs/msg/ComplexNestedKey",
            vec!["uint32_key", "nested_keys"],
        ),
        ("test_msgs/msg/NonKeyedWithNestedKey", vec![]),
    ];
    for (name, keys) in keyed {
        assert_eq!(set.format(&tn(name)), Some(SourceFormat::Idl), "{name}");
        let message = set.message(&tn(name)).unwrap();
        let found: Vec<&str> = message
            .fields
            .iter()
            .filter(|f| f.key)
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(found, keys, "{name}");
    }
}

/// What rosidl_adapter wrote into each `.idl` reads back as the `.msg`-style file it came
/// from: the same fields, types, defaults and constants (lines aside, and `char`, which
/// rosidl_adapter writes as IDL `uint8`).
#[test]
fn every_generated_idl_means_what_its_msg_says() {
    let share = venv_share();
    let from_idl = load(&share, SourceFormat::Idl);
    let from_msg = load(&share, SourceFormat::Msg);
    let mut compared = 0;
    let mut differences = Vec::new();
    for message in from_msg.messages() {
        let Some(idl) = from_idl.message(&message.name) else {
            differences.push(format!("{}: not defined by any .idl", message.name));
            continue;
        };
        let strip = |m: &roslite_msg_gen::ast::MessageSpec| {
            let char_as_uint8 = |ty: &mut BaseType| {
                if *ty == BaseType::Primitive(Primitive::Char) {
                    *ty = BaseType::Primitive(Primitive::Uint8);
                }
            };
            let mut m = m.clone();
            for field in &mut m.fields {
                field.line = 0;
                char_as_uint8(&mut field.ty.base);
            }
            for constant in &mut m.constants {
                constant.line = 0;
                char_as_uint8(&mut constant.ty);
            }
            m
        };
        if strip(message) != strip(idl) {
            differences.push(format!(
                "{}:\n  from .msg {:?}\n  from .idl {:?}",
                message.name,
                strip(message),
                strip(idl)
            ));
        }
        compared += 1;
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    assert!(compared >= 200, "only {compared} messages compared");
}
