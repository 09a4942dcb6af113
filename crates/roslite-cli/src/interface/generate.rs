//! `roslite interface generate`: C and C++ message headers for the C ABI (roslite_msg_gen's
//! `native` module), from built-in packages, `$AMENT_PREFIX_PATH`, a user's package folder or
//! single definition files.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _};
use roslite_msg_gen::ast::{InterfaceKind, TypeName};
use roslite_msg_gen::native::{self, Lang};
use roslite_msg_gen::registry::{InterfaceSet, SourceFormat};

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum LangArg {
    /// C11 headers: `pkg/msg/name.h`, `pkg__msg__Name` with __init/__fini/__encode/__decode.
    C,
    /// C++17 headers: `pkg/msg/name.hpp`, `pkg::msg::Name` as rclcpp code knows it.
    Cpp,
}

/// Write header-only C or C++ message types with CDR encode/decode, for nodes on the C ABI.
///
/// Each interface becomes one header at rosidl's include path (`DIR/std_msgs/msg/string.hpp`,
/// `DIR/example_interfaces/srv/add_two_ints.h`) holding its types with rosidl's names, members
/// and constants, plus the type name, RIHS01 hash and CDR encode/decode that the C ABI's
/// roslite_type and roslite_publish need. The runtime header they include (`roslite/cdr.hpp` or
/// `roslite/cdr.h`, standard library only) is written to DIR too, so `-I DIR` is all a compiler
/// needs. Types the requested interfaces use are generated as well unless --no-deps.
///
/// The runtime refuses types it does not know. For an interface roslite does not ship, the
/// header also carries its definition (C: `pkg__msg__Name__TYPE_DEFINITION`, to pass to
/// roslite_type_register() before creating endpoints; C++: `roslite::type_definition<T>`, which
/// the rclcpp and mROS 2 APIs register themselves), so the program runs without the package on
/// $AMENT_PREFIX_PATH.
///
/// Examples:
///   roslite interface generate --lang cpp --out include std_msgs example_interfaces/srv/AddTwoInts
///   roslite interface generate --lang c --out include ./my_msgs            (a package folder)
///   roslite interface generate --lang cpp --out include my_msgs/msg/Foo.msg
///   roslite interface generate --lang cpp --out /usr/local/include --builtin
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct GenerateArgs {
    /// The language of the headers.
    #[arg(long, value_enum)]
    lang: LangArg,
    /// The include directory to write into (created if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Every package roslite has built in (std_msgs, geometry_msgs, sensor_msgs, ...).
    #[arg(long)]
    builtin: bool,
    /// Only the requested interfaces, not the types they use (when those are installed already).
    #[arg(long)]
    no_deps: bool,
    /// What to generate: a package name (std_msgs), a full type name (std_msgs/msg/String,
    /// std_srvs/srv/SetBool, example_interfaces/action/Fibonacci), a package folder with msg/,
    /// srv/ or action/ inside (its package.xml names the package, else the folder does), or
    /// .msg/.srv/.action/.idl files (their package is the folder above msg/, srv/ or action/).
    #[arg(value_name = "PKG_OR_FILES")]
    inputs: Vec<String>,
}

pub fn run(mut set: InterfaceSet, args: &GenerateArgs) -> anyhow::Result<()> {
    let mut requests = Vec::new();
    for input in &args.inputs {
        let path = Path::new(input);
        if path.is_dir() {
            requests.push(add_package_dir(&mut set, path)?);
        } else if path.is_file() {
            requests.push(add_file(&mut set, path)?);
        } else if input.ends_with(".msg") || input.ends_with(".srv") || input.ends_with(".action") {
            bail!("{input}: no such file");
        } else {
            requests.push(input.clone());
        }
    }
    if args.builtin {
        requests.extend(
            roslite_msg_gen::build::builtin_packages()
                .into_iter()
                .map(str::to_owned),
        );
    }
    if requests.is_empty() {
        bail!(
            "nothing to generate: name packages, types, package folders or definition files, \
             or pass --builtin"
        );
    }
    set.check()
        .context("the loaded interfaces are inconsistent")?;
    let names = native::select(&set, &requests, !args.no_deps)?;
    let lang = match args.lang {
        LangArg::C => Lang::C,
        LangArg::Cpp => Lang::Cpp,
    };
    let files = native::generate(&set, &names, lang)?;
    let written = native::write(&args.out, &files)?;
    let packages = native::by_package(&names);
    println!(
        "{} headers for {} interfaces of {} packages in {} ({written} written, the rest unchanged)",
        files.len(),
        names.len(),
        packages.len(),
        args.out.display()
    );
    Ok(())
}

/// Loads `dir/{msg,srv,action}/*`; returns the package name.
fn add_package_dir(set: &mut InterfaceSet, dir: &Path) -> anyhow::Result<String> {
    let package = package_name(dir)?;
    let mut found = 0;
    for kind in [
        InterfaceKind::Msg,
        InterfaceKind::Srv,
        InterfaceKind::Action,
    ] {
        let sub = dir.join(kind.as_str());
        if !sub.is_dir() {
            continue;
        }
        let mut paths: Vec<PathBuf> = fs::read_dir(&sub)
            .with_context(|| format!("cannot read {}", sub.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        paths.sort();
        let extension = |p: &PathBuf| p.extension().and_then(|e| e.to_str()).map(str::to_owned);
        let native: Vec<&PathBuf> = paths
            .iter()
            .filter(|p| extension(p).as_deref() == Some(kind.extension()))
            .collect();
        // An .idl only where no .msg/.srv/.action of its name is beside it (rosidl installs
        // both for every interface it generated from the latter).
        let idl = paths.iter().filter(|p| {
            extension(p).as_deref() == Some("idl")
                && !native.iter().any(|n| n.file_stem() == p.file_stem())
        });
        for path in native.iter().copied() {
            add_definition(set, &package, kind, SourceFormat::Msg, path)?;
            found += 1;
        }
        for path in idl {
            add_definition(set, &package, kind, SourceFormat::Idl, path)?;
            found += 1;
        }
    }
    if found == 0 {
        bail!(
            "{}: no msg/, srv/ or action/ folder with definitions in it",
            dir.display()
        );
    }
    Ok(package)
}

/// Loads one definition file; returns its full type name. An `.idl` file's kind is the folder
/// it is in (`msg`, `srv` or `action`).
fn add_file(set: &mut InterfaceSet, path: &Path) -> anyhow::Result<String> {
    let extension = path.extension().and_then(|e| e.to_str());
    let (kind, format) = if extension == Some("idl") {
        let folder = path
            .canonicalize()
            .ok()
            .and_then(|p| Some(p.parent()?.file_name()?.to_str()?.to_owned()));
        let kind = folder
            .as_deref()
            .and_then(InterfaceKind::from_extension)
            .with_context(|| {
                format!(
                    "{}: an .idl file must be in a msg/, srv/ or action/ folder, which says what \
                     it defines",
                    path.display()
                )
            })?;
        (kind, SourceFormat::Idl)
    } else {
        let kind = extension
            .and_then(InterfaceKind::from_extension)
            .with_context(|| {
                format!(
                    "{}: expected a .msg, .srv, .action or .idl file",
                    path.display()
                )
            })?;
        (kind, SourceFormat::Msg)
    };
    let absolute =
        fs::canonicalize(path).with_context(|| format!("cannot read {}", path.display()))?;
    let package_dir = absolute
        .parent()
        .and_then(Path::parent)
        .with_context(|| format!("{}: no package folder above it", path.display()))?;
    let package = package_name(package_dir)?;
    let name = add_definition(set, &package, kind, format, path)?;
    Ok(name.to_string())
}

fn add_definition(
    set: &mut InterfaceSet,
    package: &str,
    kind: InterfaceKind,
    format: SourceFormat,
    path: &Path,
) -> anyhow::Result<TypeName> {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .with_context(|| format!("{}: file name is not UTF-8", path.display()))?;
    let text =
        fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let name = TypeName::new(package, kind, stem);
    if set.interface(&name).is_some() {
        eprintln!(
            "warning: {name} is already known (from {}); {} is not used",
            set.file(&name).unwrap_or("?"),
            path.display()
        );
    }
    let file = path.display().to_string();
    match format {
        SourceFormat::Idl => set.add_idl_source(package, kind, stem, &text, &file)?,
        SourceFormat::Msg => set.add_source(package, kind, stem, &text, &file)?,
    }
    Ok(name)
}

/// The `<name>` of `dir/package.xml`, else the folder's name.
fn package_name(dir: &Path) -> anyhow::Result<String> {
    if let Ok(xml) = fs::read_to_string(dir.join("package.xml")) {
        if let Some(start) = xml.find("<name>") {
            let rest = &xml[start + "<name>".len()..];
            if let Some(end) = rest.find("</name>") {
                let name = rest[..end].trim();
                if !name.is_empty() {
                    return Ok(name.to_owned());
                }
            }
        }
    }
    let absolute = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned());
    absolute
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_owned)
        .with_context(|| format!("{}: cannot tell the package name", dir.display()))
}
