//! Shared test helpers: locating and reading the reference captures.

#![allow(dead_code)]

pub mod pcap;

use std::path::PathBuf;

pub const CYCLONE: &str = "cyclone11-python-to-kilted-rclpy.pcap";
pub const IMAGE: &str = "kilted-fastdds-image-datafrag.pcap";
pub const TALKER: &str = "kilted-fastdds-talker-listener-setbool.pcap";
pub const KEYED: &str = "kilted-fastdds-keyed.pcap";
pub const ALL: [&str; 4] = [CYCLONE, IMAGE, TALKER, KEYED];

/// `tests/data` of this crate, where the captures are checked in (see its README).
///
/// # Panics
/// With an explanation if the folder is missing: the golden tests must not pass vacuously.
pub fn captures_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    assert!(
        dir.is_dir(),
        "packet captures not found at {}: the golden tests read the pcap files checked in there",
        dir.display()
    );
    dir
}

/// Every UDP datagram of one capture, with the count of non-UDP frames and IP fragments.
///
/// # Panics
/// If the file is missing or cannot be parsed.
pub fn read_capture(name: &str) -> pcap::Capture {
    let path = captures_dir().join(name);
    let bytes = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("cannot read capture {}: {e}", path.display()));
    pcap::parse(&bytes).unwrap_or_else(|e| panic!("cannot parse capture {}: {e}", path.display()))
}

/// The UDP payloads that start with the RTPS magic.
pub fn rtps_datagrams(name: &str) -> Vec<pcap::UdpDatagram> {
    read_capture(name)
        .udp
        .into_iter()
        .filter(|d| d.payload.starts_with(b"RTPS"))
        .collect()
}
