//! `roslite interface generate`: headers for a user's package folder and single files, compiled
//! with `c++` and `cc` and used the way a node would (rosidl names, defaults, constants, pointer
//! aliases, encode/decode, type name and hash for the C ABI).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn roslite(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roslite"))
        .args(args)
        .env_remove("AMENT_PREFIX_PATH")
        .output()
        .expect("roslite runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// A package folder `pkg_dir` whose package.xml calls it `sensors_msgs_demo`.
fn user_package(root: &Path) -> PathBuf {
    let pkg = root.join("src_folder");
    fs::create_dir_all(pkg.join("msg")).unwrap();
    fs::create_dir_all(pkg.join("srv")).unwrap();
    fs::write(
        pkg.join("package.xml"),
        "<package format=\"3\">\n  <name>sensors_msgs_demo</name>\n</package>\n",
    )
    .unwrap();
    fs::write(
        pkg.join("msg/RangeReading.msg"),
        "uint8 OK=1\nstring UNIT=\"m\"\nstd_msgs/Header header\nfloat64[] values\n\
         string<=8 label \"abc\"\nint32[3] window [1, 2, 3]\nbool valid true\n",
    )
    .unwrap();
    fs::write(
        pkg.join("srv/GetRange.srv"),
        "string sensor\n---\nRangeReading reading\n",
    )
    .unwrap();
    pkg
}

fn compile(compiler: &str, std: &str, source: &Path, include: &Path, exe: &Path) {
    let output = Command::new(compiler)
        .args([std, "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(exe)
        .arg(source)
        .arg("-I")
        .arg(include)
        .output()
        .unwrap_or_else(|e| panic!("{compiler} runs (installed by cargo xtask test): {e}"));
    assert!(
        output.status.success(),
        "{compiler} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_package_folder_becomes_cpp_headers_a_node_can_use() {
    let root = scratch("generate_cpp");
    let pkg = user_package(&root);
    let include = root.join("include");
    let output = roslite(&[
        "interface",
        "generate",
        "--lang",
        "cpp",
        "--out",
        include.to_str().unwrap(),
        pkg.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{output:?}");
    for header in [
        "sensors_msgs_demo/msg/range_reading.hpp",
        "sensors_msgs_demo/srv/get_range.hpp",
        "std_msgs/msg/header.hpp",
        "builtin_interfaces/msg/time.hpp",
        "service_msgs/msg/service_event_info.hpp",
        "roslite/cdr.hpp",
    ] {
        assert!(include.join(header).is_file(), "{header} missing");
    }
    let hash =
        String::from_utf8(roslite(&["interface", "hash", "std_msgs/msg/Header"]).stdout).unwrap();
    let source = root.join("node.cpp");
    fs::write(
        &source,
        r#"
#include <cassert>
#include <cstdio>
#include <cstring>
#include "sensors_msgs_demo/msg/range_reading.hpp"
#include "sensors_msgs_demo/srv/get_range.hpp"
#include "std_msgs/msg/header.hpp"

int main()
{
  using sensors_msgs_demo::msg::RangeReading;
  RangeReading::SharedPtr msg = std::make_shared<RangeReading>();
  assert(msg->label == "abc" && msg->window[2] == 3 && msg->valid && msg->values.empty());
  static_assert(RangeReading::OK == 1, "constant");
  assert(std::strcmp(RangeReading::UNIT, "m") == 0);
  msg->header.frame_id = "base";
  msg->header.stamp.sec = 7;
  msg->values = {1.5, -2.0};
  std::vector<std::uint8_t> bytes = roslite::encode(*msg);
  RangeReading back;
  assert(roslite::decode(bytes, back) && back == *msg);
  msg->label = "far too long";
  bool threw = false;
  try {
    roslite::encode(*msg);
  } catch (const roslite::encode_error &) {
    threw = true;
  }
  assert(threw);
  using Srv = sensors_msgs_demo::srv::GetRange;
  Srv::Request request;
  request.sensor = "front";
  Srv::Response::UniquePtr response = std::make_unique<Srv::Response>();
  (void)response;
  static_assert(roslite::is_service<Srv>::value, "service");
  static_assert(roslite::is_message<Srv::Request>::value, "message");
  static_assert(!roslite::is_message<int>::value, "not a message");
  std::printf("%s %s %s\n", roslite::message_traits<std_msgs::msg::Header>::type_name(),
    roslite::message_traits<std_msgs::msg::Header>::type_hash(),
    roslite::service_traits<Srv>::type_name());
  return 0;
}
"#,
    )
    .unwrap();
    let exe = root.join("node");
    compile("c++", "-std=c++17", &source, &include, &exe);
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success(), "{run:?}");
    assert_eq!(
        String::from_utf8(run.stdout).unwrap(),
        format!(
            "std_msgs/msg/Header {} sensors_msgs_demo/srv/GetRange\n",
            hash.trim()
        )
    );
}

#[test]
fn a_single_file_becomes_a_c_header_a_node_can_use() {
    let root = scratch("generate_c");
    let pkg = user_package(&root);
    let include = root.join("include");
    let file = pkg.join("msg/RangeReading.msg");
    let output = roslite(&[
        "interface",
        "generate",
        "--lang",
        "c",
        "--out",
        include.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{output:?}");
    assert!(include
        .join("sensors_msgs_demo/msg/range_reading.h")
        .is_file());
    assert!(!include.join("sensors_msgs_demo/srv/get_range.h").exists());
    let source = root.join("node.c");
    fs::write(
        &source,
        r#"
#include <assert.h>
#include <stdio.h>
#include "sensors_msgs_demo/msg/range_reading.h"

int main(void)
{
  sensors_msgs_demo__msg__RangeReading msg;
  sensors_msgs_demo__msg__RangeReading back;
  roslite_cdr_buffer buf = {0};
  assert(sensors_msgs_demo__msg__RangeReading__init(&msg));
  assert(msg.window[1] == 2 && msg.valid && strcmp(msg.label.data, "abc") == 0);
  assert(sensors_msgs_demo__msg__RangeReading__OK == 1);
  assert(roslite__String__assign(&msg.header.frame_id, "base"));
  assert(roslite__double__Sequence__init(&msg.values, 2));
  msg.values.data[0] = 1.5;
  assert(sensors_msgs_demo__msg__RangeReading__encode(&msg, &buf));
  assert(sensors_msgs_demo__msg__RangeReading__init(&back));
  assert(sensors_msgs_demo__msg__RangeReading__decode(&back, buf.data, buf.length));
  assert(sensors_msgs_demo__msg__RangeReading__are_equal(&msg, &back));
  assert(!sensors_msgs_demo__msg__RangeReading__decode(&back, buf.data, buf.length - 1));
  printf("%s %s\n", sensors_msgs_demo__msg__RangeReading__TYPE_NAME,
    sensors_msgs_demo__msg__RangeReading__TYPE_HASH);
  sensors_msgs_demo__msg__RangeReading__fini(&msg);
  sensors_msgs_demo__msg__RangeReading__fini(&back);
  roslite_cdr_buffer_fini(&buf);
  return 0;
}
"#,
    )
    .unwrap();
    let exe = root.join("node");
    compile("cc", "-std=c11", &source, &include, &exe);
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success(), "{run:?}");
    let stdout = String::from_utf8(run.stdout).unwrap();
    assert!(
        stdout.starts_with("sensors_msgs_demo/msg/RangeReading RIHS01_"),
        "{stdout}"
    );
}

/// An `.idl` file, alone or in a package folder, becomes a C header that compiles and carries
/// its IDL text for `roslite_type_register` (an `IDL:` section of the definition bundle).
/// A file alone is read alone, so this one uses built-in types only.
#[test]
fn idl_files_become_headers_with_their_idl_definition() {
    let root = scratch("generate_idl");
    let pkg = user_package(&root);
    let idl =
        "module sensors_msgs_demo { module msg {\n  struct Beacon {\n    @key uint16 id;\n    \
               std_msgs::msg::Header header;\n  };\n}; };\n";
    fs::write(pkg.join("msg/Beacon.idl"), idl).unwrap();
    let include = root.join("include");
    for target in [pkg.clone(), pkg.join("msg/Beacon.idl")] {
        let _ = fs::remove_dir_all(&include);
        let output = roslite(&[
            "interface",
            "generate",
            "--lang",
            "c",
            "--out",
            include.to_str().unwrap(),
            target.to_str().unwrap(),
        ]);
        assert!(output.status.success(), "{output:?}");
        let header = fs::read_to_string(include.join("sensors_msgs_demo/msg/beacon.h")).unwrap();
        assert!(
            header.contains("\"IDL: sensors_msgs_demo/msg/Beacon\\n\""),
            "{header}"
        );
        assert!(header.contains("\"    @key uint16 id;\\n\""), "{header}");
    }
    let source = root.join("node.c");
    fs::write(
        &source,
        "#include <assert.h>\n#include \"sensors_msgs_demo/msg/beacon.h\"\n         int main(void) {\n  sensors_msgs_demo__msg__Beacon msg;\n           assert(sensors_msgs_demo__msg__Beacon__init(&msg));\n  msg.id = 7;\n           sensors_msgs_demo__msg__Beacon__fini(&msg);\n  return 0;\n}\n",
    )
    .unwrap();
    let exe = root.join("node");
    compile("cc", "-std=c11", &source, &include, &exe);
    assert!(Command::new(&exe).output().unwrap().status.success());

    let loose = root.join("Loose.idl");
    fs::write(&loose, idl).unwrap();
    let output = roslite(&[
        "interface",
        "generate",
        "--lang",
        "c",
        "--out",
        include.to_str().unwrap(),
        loose.to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("an .idl file must be in a msg/, srv/ or action/ folder"),
        "{output:?}"
    );
}

#[test]
fn unknown_names_and_empty_requests_are_errors() {
    let root = scratch("generate_errors");
    let out = root.join("include");
    let out = out.to_str().unwrap();
    let output = roslite(&[
        "interface",
        "generate",
        "--lang",
        "cpp",
        "--out",
        out,
        "nope_msgs",
    ]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("`nope_msgs` is neither a known interface"),
        "{stderr}"
    );
    let output = roslite(&["interface", "generate", "--lang", "c", "--out", out]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("nothing to generate"));
    let output = roslite(&[
        "interface",
        "generate",
        "--lang",
        "c",
        "--out",
        out,
        "x/msg/Y.msg",
    ]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("no such file"));
    let output = roslite(&[
        "interface",
        "generate",
        "--lang",
        "cpp",
        "--out",
        out,
        "--no-deps",
        "std_msgs/msg/Header",
    ]);
    assert!(output.status.success(), "{output:?}");
    assert!(root.join("include/std_msgs/msg/header.hpp").is_file());
    assert!(!root.join("include/builtin_interfaces").exists());
}

/// A package `bounds_demo` with the same fields bounded (`Bounded`) and not (`Free`): what the
/// second encodes is what rclpy would send for the first.
fn bounds_package(root: &Path) -> PathBuf {
    let pkg = root.join("bounds_demo");
    fs::create_dir_all(pkg.join("msg")).unwrap();
    fs::write(
        pkg.join("package.xml"),
        "<package format=\"3\">\n  <name>bounds_demo</name>\n</package>\n",
    )
    .unwrap();
    fs::write(pkg.join("msg/Bounded.msg"), "string<=3 s\nwstring<=2 w\n").unwrap();
    fs::write(pkg.join("msg/Free.msg"), "string s\nwstring w\n").unwrap();
    pkg
}

/// Generated C and C++ types read a bounded string as leniently as any ROS 2 client library
/// writes it (in characters: rclpy), and send it only within the strict reading (bytes or
/// UTF-16 units: rclcpp).
#[test]
fn generated_c_and_cpp_types_read_bounds_in_characters_and_send_them_in_bytes() {
    let root = scratch("generate_bounds");
    let pkg = bounds_package(&root);
    for (lang, compiler, std, file, source) in [
        ("cpp", "c++", "-std=c++17", "node.cpp", BOUNDS_CPP),
        ("c", "cc", "-std=c11", "node.c", BOUNDS_C),
    ] {
        let include = root.join(format!("include_{lang}"));
        let output = roslite(&[
            "interface",
            "generate",
            "--lang",
            lang,
            "--out",
            include.to_str().unwrap(),
            pkg.to_str().unwrap(),
        ]);
        assert!(output.status.success(), "{output:?}");
        let path = root.join(file);
        fs::write(&path, source).unwrap();
        let exe = root.join(format!("bounds_{lang}"));
        compile(compiler, std, &path, &include, &exe);
        let run = Command::new(&exe).output().unwrap();
        assert!(run.status.success(), "{lang}: {run:?}");
        assert_eq!(String::from_utf8(run.stdout).unwrap(), "ok\n", "{lang}");
    }
}

const BOUNDS_CPP: &str = r#"
#include <cassert>
#include <cstdio>
#include "bounds_demo/msg/bounded.hpp"
#include "bounds_demo/msg/free.hpp"

// Whether `s` and `w`, sent without bounds, decode as the bounded type.
static bool accepted(const char * s, const std::u16string & w)
{
  bounds_demo::msg::Free free;
  free.s = s;
  free.w = w;
  bounds_demo::msg::Bounded bounded;
  bool ok = roslite::decode(roslite::encode(free), bounded);
  assert(!ok || (bounded.s == free.s && bounded.w == free.w));
  return ok;
}

static bool sent(const char * s, const std::u16string & w)
{
  bounds_demo::msg::Bounded bounded;
  bounded.s = s;
  bounded.w = w;
  try {
    roslite::encode(bounded);
    return true;
  } catch (const roslite::encode_error &) {
    return false;
  }
}

int main()
{
  // 6 bytes in a string<=3, 4 UTF-16 units in a wstring<=2: three and two characters.
  assert(accepted("\xc3\xa4\xc3\xb6\xc3\xbc", u"\U0001F600\U0001F600"));
  assert(!accepted("\xc3\xa4\xc3\xb6\xc3\xbc\xc3\x9f", u""));
  assert(!accepted("abcd", u""));
  assert(!accepted("", u"abc"));
  assert(!accepted("", u"\U0001F600\U0001F600a"));
  assert(sent("abc", u"ab"));
  assert(!sent("\xc3\xa4\xc3\xb6\xc3\xbc", u""));
  assert(!sent("", u"\U0001F600a"));
  std::printf("ok\n");
  return 0;
}
"#;

const BOUNDS_C: &str = r#"
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include "bounds_demo/msg/bounded.h"
#include "bounds_demo/msg/free.h"

/* Whether `s` and `w` (n UTF-16 units), sent without bounds, decode as the bounded type. */
static bool accepted(const char *s, const uint16_t *w, size_t n)
{
  bounds_demo__msg__Free free_msg;
  bounds_demo__msg__Bounded bounded;
  roslite_cdr_buffer buf = {0};
  assert(bounds_demo__msg__Free__init(&free_msg) && bounds_demo__msg__Bounded__init(&bounded));
  assert(roslite__String__assign(&free_msg.s, s));
  assert(roslite__U16String__assignn(&free_msg.w, w, n));
  assert(bounds_demo__msg__Free__encode(&free_msg, &buf));
  bool ok = bounds_demo__msg__Bounded__decode(&bounded, buf.data, buf.length);
  assert(!ok || (strcmp(bounded.s.data, s) == 0 && bounded.w.size == n));
  bounds_demo__msg__Free__fini(&free_msg);
  bounds_demo__msg__Bounded__fini(&bounded);
  roslite_cdr_buffer_fini(&buf);
  return ok;
}

static bool sent(const char *s, const uint16_t *w, size_t n)
{
  bounds_demo__msg__Bounded bounded;
  roslite_cdr_buffer buf = {0};
  assert(bounds_demo__msg__Bounded__init(&bounded));
  assert(roslite__String__assign(&bounded.s, s));
  assert(roslite__U16String__assignn(&bounded.w, w, n));
  bool ok = bounds_demo__msg__Bounded__encode(&bounded, &buf);
  bounds_demo__msg__Bounded__fini(&bounded);
  roslite_cdr_buffer_fini(&buf);
  return ok;
}

int main(void)
{
  static const uint16_t faces[] = {0xd83d, 0xde00, 0xd83d, 0xde00, 'a'};
  static const uint16_t abc[] = {'a', 'b', 'c'};
  static const uint16_t face_a[] = {0xd83d, 0xde00, 'a'};
  /* 6 bytes in a string<=3, 4 UTF-16 units in a wstring<=2: three and two characters. */
  assert(accepted("\xc3\xa4\xc3\xb6\xc3\xbc", faces, 4));
  assert(!accepted("\xc3\xa4\xc3\xb6\xc3\xbc\xc3\x9f", abc, 0));
  assert(!accepted("abcd", abc, 0));
  assert(!accepted("", abc, 3));
  assert(!accepted("", faces, 5));
  assert(sent("abc", abc, 2));
  assert(!sent("\xc3\xa4\xc3\xb6\xc3\xbc", abc, 0));
  assert(!sent("", face_a, 3));
  printf("ok\n");
  return 0;
}
"#;
