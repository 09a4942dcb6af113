use super::*;
use crate::ast::TypeName;

/// A scratch directory removed on drop, unique per test and process.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Self {
        let dir = env::temp_dir().join(format!("roslite-msg-gen-{}-{test}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.0.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[test]
fn embedded_builtin_interfaces_load_and_resolve() {
    let mut set = InterfaceSet::new();
    add_builtin_interfaces(&mut set).unwrap();
    set.check().unwrap();
    assert!(set
        .message(&TypeName::parse("std_msgs/msg/Header").unwrap())
        .is_some());
    assert!(set
        .message(&TypeName::parse("std_srvs/srv/SetBool_Event").unwrap())
        .is_some());
    let packages = builtin_packages();
    assert_eq!(packages, set.packages());
    assert!(packages.contains(&"sensor_msgs"));
}

#[test]
fn user_package_is_generated_with_builtin_references() {
    let scratch = Scratch::new("user");
    let point = scratch.write(
        "msg/Labelled.msg",
        "std_msgs/Header header\ngeometry_msgs/Point point\nstring<=16 label \"none\"\n",
    );
    let wrapper = scratch.write("msg/Wrapper.msg", "Labelled inner\n");
    let service = scratch.write("srv/Lookup.srv", "string key\n---\nLabelled value\n");
    scratch.write("msg/README.md", "not an interface");
    let out = scratch.0.join("out.rs");

    let generated = generate_into("my_msgs", &scratch.0, &out).unwrap();
    assert_eq!(generated.output, out);
    assert_eq!(
        generated.inputs,
        vec![
            scratch.0.join("msg"),
            point,
            wrapper,
            scratch.0.join("srv"),
            service
        ]
    );
    let code = fs::read_to_string(&out).unwrap();
    assert!(code.starts_with(GENERATED_MARKER));
    for expected in [
        "pub header: ::roslite_msgs::std_msgs::msg::Header,",
        "pub point: ::roslite_msgs::geometry_msgs::msg::Point,",
        "pub inner: Labelled,",
        "pub value: super::msg::Labelled,",
        "impl ::roslite_msgs::Service for Lookup {",
        "label: ::std::string::String::from(\"none\"),",
    ] {
        assert!(code.contains(expected), "missing `{expected}`");
    }
    // Built-in packages are referenced, not generated again.
    assert!(!code.contains("pub struct Header"));
}

#[test]
fn idl_files_are_generated_and_keyed_types_get_their_key() {
    let scratch = Scratch::new("idl");
    let keyed = scratch.write(
        "msg/Reading.idl",
        "module my_msgs { module msg {\n  struct Reading {\n    @key string<8> sensor;\n    \
         double value;\n    std_msgs::msg::Header header;\n  };\n}; };\n",
    );
    // A .msg next to an .idl of the same name wins, as in a share directory.
    let plain = scratch.write("msg/Plain.msg", "int32 x\n");
    scratch.write("msg/Plain.idl", "not even IDL");
    let out = scratch.0.join("out.rs");
    let generated = generate_into("my_msgs", &scratch.0, &out).unwrap();
    assert_eq!(generated.inputs, vec![scratch.0.join("msg"), plain, keyed]);
    let code = fs::read_to_string(&out).unwrap();
    for expected in [
        "pub struct Reading {",
        "pub sensor: ::std::string::String,",
        "pub header: ::roslite_msgs::std_msgs::msg::Header,",
        "const KEY: ::core::option::Option<&'static ::roslite_msgs::cdr::key::KeyStruct> =",
        "element: ::roslite_msgs::cdr::key::KeyElement::String { bound: Some(8) },",
        "pub struct Plain {",
    ] {
        assert!(code.contains(expected), "missing `{expected}` in\n{code}");
    }
    // Keyless types keep the trait's default.
    assert_eq!(code.matches("const KEY:").count(), 1);

    let bad = scratch.write(
        "msg/Broken.idl",
        "module my_msgs { module msg { struct Broken { char c; }; }; };\n",
    );
    let error = generate_into("my_msgs", &scratch.0, &out).unwrap_err();
    assert!(
        error.to_string().starts_with(&format!(
            "{}:1:47: IDL 'char' is not supported",
            bad.display()
        )),
        "{error}"
    );
}

#[test]
fn parse_errors_name_file_and_line() {
    let scratch = Scratch::new("parse-error");
    let bad = scratch.write("msg/Bad.msg", "int32 fine\nfloat65 broken\n");
    let error = generate_into("my_msgs", &scratch.0, &scratch.0.join("out.rs")).unwrap_err();
    assert!(matches!(error, GenError::Parse(_)), "{error:?}");
    let text = error.to_string();
    assert!(
        text.starts_with(&format!("{}:2: ", bad.display())),
        "{text}"
    );
    assert!(!scratch.0.join("out.rs").exists());
}

#[test]
fn unknown_references_are_reported_with_their_line() {
    let scratch = Scratch::new("unknown-type");
    scratch.write("msg/Uses.msg", "int8 a\nother_msgs/Missing m\n");
    let error = generate_into("my_msgs", &scratch.0, &scratch.0.join("out.rs")).unwrap_err();
    assert!(matches!(error, GenError::Resolve(_)), "{error:?}");
    assert!(error.to_string().contains("Uses.msg:2:"), "{error}");
}

#[test]
fn shipped_interfaces_and_empty_crates_are_rejected() {
    let scratch = Scratch::new("names");
    let error = generate_into("my_msgs", &scratch.0, &scratch.0.join("out.rs")).unwrap_err();
    assert!(matches!(error, GenError::UnknownPackage(_)), "{error:?}");

    scratch.write("msg/String.msg", "string data\n");
    let error = generate_into("std_msgs", &scratch.0, &scratch.0.join("out.rs")).unwrap_err();
    assert!(
        matches!(&error, GenError::ShippedInterface(name) if name.to_string() == "std_msgs/msg/String"),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("roslite_msgs::std_msgs::msg::String"),
        "{error}"
    );

    let scratch = Scratch::new("shipped-reference");
    scratch.write("msg/Stamped.msg", "Header header\n");
    let error = generate_into("std_msgs", &scratch.0, &scratch.0.join("out.rs")).unwrap_err();
    assert!(
        matches!(&error, GenError::ShippedReference { shipped, .. }
            if shipped.to_string() == "std_msgs/msg/Header"),
        "{error:?}"
    );
}

#[test]
fn a_crate_adds_interfaces_to_a_package_roslite_msgs_ships_part_of() {
    // roslite-msgs ships test_msgs' Fibonacci action only; test_msgs' messages come from the
    // user crate, and the generated code holds those alone.
    let scratch = Scratch::new("extend");
    scratch.write("msg/Basic.msg", "int32 x\n");
    scratch.write("srv/Ask.srv", "Basic q\n---\nbuiltin_interfaces/Time t\n");
    let out = scratch.0.join("out.rs");
    generate_into("test_msgs", &scratch.0, &out).unwrap();
    let code = fs::read_to_string(&out).unwrap();
    assert!(code.contains("pub struct Basic {"), "{code}");
    assert!(code.contains("pub struct Ask_Request {"), "{code}");
    assert!(
        code.contains("::roslite_msgs::builtin_interfaces::msg::Time"),
        "{code}"
    );
    assert!(!code.contains("Fibonacci"), "{code}");
}

#[test]
fn regenerate_builtin_writes_the_tree_and_removes_only_stale_generated_files() {
    let scratch = Scratch::new("regenerate");
    scratch.write("interfaces/pkg_a/msg/A.msg", "int32 x\n");
    scratch.write("interfaces/pkg_b/srv/B.srv", "pkg_a/A a\n---\n");
    scratch.write(
        "interfaces/service_msgs/msg/ServiceEventInfo.msg",
        "int8 event_type\n",
    );
    let stale = scratch.write(
        "crate/src/generated/old_pkg.rs",
        &format!("{GENERATED_MARKER}\n"),
    );
    let handwritten = scratch.write("crate/src/generated/notes.rs", "// mine\n");
    let out = scratch.0.join("crate/src/generated");

    let files = regenerate_builtin(&scratch.0.join("interfaces"), &out).unwrap();
    let names: Vec<_> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "interface_files.rs",
            "mod.rs",
            "pkg_a.rs",
            "pkg_b.rs",
            "service_hashes.rs",
            "service_msgs.rs",
            "type_hashes.rs",
            "type_keys.rs"
        ]
    );
    // No keyed type among these: an empty table.
    let keys = fs::read_to_string(out.join("type_keys.rs")).unwrap();
    assert!(keys.trim_end().ends_with("[\n]"), "{keys}");
    assert!(!stale.exists());
    assert!(handwritten.exists());

    let list = fs::read_to_string(out.join("interface_files.rs")).unwrap();
    assert!(list.contains("text: include_str!(\"../../interfaces/pkg_b/srv/B.srv\"),"));
    let mod_rs = fs::read_to_string(out.join("mod.rs")).unwrap();
    assert!(mod_rs.contains("#[rustfmt::skip]\npub mod pkg_b;\n"));
    let pkg_b = fs::read_to_string(out.join("pkg_b.rs")).unwrap();
    assert!(pkg_b.contains("pub a: crate::pkg_a::msg::A,"));

    // A second run with nothing changed leaves the files untouched.
    let before = fs::metadata(out.join("pkg_a.rs"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(
        regenerate_builtin(&scratch.0.join("interfaces"), &out).unwrap(),
        files
    );
    assert_eq!(
        fs::metadata(out.join("pkg_a.rs"))
            .unwrap()
            .modified()
            .unwrap(),
        before
    );
}
