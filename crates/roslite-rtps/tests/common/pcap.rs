//! A small capture-file reader for tests: classic pcap (either byte order, µs or ns
//! timestamps) and pcapng (SHB/IDB/EPB/SPB blocks), link types Ethernet (1), BSD null/loopback
//! (0), Linux cooked v1 (113) and v2 (276); IPv4 + UDP only.
//!
//! Test code: errors are `String`s with the file position, and anything unexpected fails loudly
//! rather than being skipped silently.

#![allow(dead_code)]

use std::net::{Ipv4Addr, SocketAddrV4};

pub const LINKTYPE_NULL: u32 = 0;
pub const LINKTYPE_ETHERNET: u32 = 1;
pub const LINKTYPE_LINUX_SLL: u32 = 113;
pub const LINKTYPE_LINUX_SLL2: u32 = 276;

/// One UDP datagram from the capture.
#[derive(Clone, Debug)]
pub struct UdpDatagram {
    /// 1-based frame number, as Wireshark counts.
    pub frame: usize,
    pub src: SocketAddrV4,
    pub dst: SocketAddrV4,
    pub payload: Vec<u8>,
}

/// Everything the reader found.
#[derive(Debug, Default)]
pub struct Capture {
    pub udp: Vec<UdpDatagram>,
    /// Frames that were not IPv4/UDP (ARP, IPv6, TCP, ...).
    pub other_frames: usize,
    /// IPv4 fragments (not reassembled); the reference captures have none.
    pub ip_fragments: usize,
}

fn u16_at(b: &[u8], off: usize, le: bool) -> Result<u16, String> {
    let s: [u8; 2] = b
        .get(off..off + 2)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| format!("truncated u16 at offset {off}"))?;
    Ok(if le {
        u16::from_le_bytes(s)
    } else {
        u16::from_be_bytes(s)
    })
}

fn u32_at(b: &[u8], off: usize, le: bool) -> Result<u32, String> {
    let s: [u8; 4] = b
        .get(off..off + 4)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| format!("truncated u32 at offset {off}"))?;
    Ok(if le {
        u32::from_le_bytes(s)
    } else {
        u32::from_be_bytes(s)
    })
}

fn slice(b: &[u8], start: usize, len: usize) -> Result<&[u8], String> {
    b.get(start..start + len)
        .ok_or_else(|| format!("truncated: {len} bytes at offset {start}"))
}

/// Parses a whole capture file.
pub fn parse(file: &[u8]) -> Result<Capture, String> {
    let mut cap = Capture::default();
    let frames = match file.get(..4) {
        Some([0x0a, 0x0d, 0x0d, 0x0a]) => pcapng_frames(file)?,
        Some(_) => pcap_frames(file)?,
        None => return Err("file shorter than 4 bytes".into()),
    };
    for (i, (linktype, frame)) in frames.into_iter().enumerate() {
        decode_frame(&mut cap, i + 1, linktype, &frame)?;
    }
    Ok(cap)
}

/// Classic pcap: 24-byte global header, then 16-byte record headers.
fn pcap_frames(file: &[u8]) -> Result<Vec<(u32, Vec<u8>)>, String> {
    let le = match u32_at(file, 0, true)? {
        0xa1b2_c3d4 | 0xa1b2_3c4d => true,
        0xd4c3_b2a1 | 0x4d3c_b2a1 => false,
        m => return Err(format!("not a pcap file (magic {m:#010x})")),
    };
    let linktype = u32_at(file, 20, le)? & 0x0fff_ffff;
    let mut off = 24;
    let mut out = Vec::new();
    while off < file.len() {
        let caplen = u32_at(file, off + 8, le)? as usize;
        out.push((linktype, slice(file, off + 16, caplen)?.to_vec()));
        off += 16 + caplen;
    }
    Ok(out)
}

/// pcapng: blocks of (type, total length, body, total length); the section header sets the
/// byte order, interface descriptions the link types.
fn pcapng_frames(file: &[u8]) -> Result<Vec<(u32, Vec<u8>)>, String> {
    let mut le = true;
    let mut linktypes: Vec<u32> = Vec::new();
    let mut out = Vec::new();
    let mut off = 0;
    while off < file.len() {
        if u32_at(file, off, true)? == 0x0a0d_0d0a {
            le = match u32_at(file, off + 8, true)? {
                0x1a2b_3c4d => true,
                0x4d3c_2b1a => false,
                m => return Err(format!("bad pcapng byte-order magic {m:#010x} at {off}")),
            };
            linktypes.clear();
        }
        let block_type = u32_at(file, off, le)?;
        let block_len = u32_at(file, off + 4, le)? as usize;
        if block_len < 12 || block_len % 4 != 0 {
            return Err(format!("bad pcapng block length {block_len} at {off}"));
        }
        let body = slice(file, off + 8, block_len - 12)?;
        match block_type {
            // Interface Description Block.
            0x0000_0001 => linktypes.push(u32::from(u16_at(body, 0, le)?)),
            // Enhanced Packet Block.
            0x0000_0006 => {
                let iface = u32_at(body, 0, le)? as usize;
                let caplen = u32_at(body, 12, le)? as usize;
                let linktype = *linktypes
                    .get(iface)
                    .ok_or_else(|| format!("packet for unknown interface {iface} at {off}"))?;
                out.push((linktype, slice(body, 20, caplen)?.to_vec()));
            }
            // Simple Packet Block: interface 0, captured length = block body minus 4.
            0x0000_0003 => {
                let linktype = *linktypes
                    .first()
                    .ok_or("simple packet before any interface")?;
                let orig = u32_at(body, 0, le)? as usize;
                out.push((linktype, slice(body, 4, orig.min(body.len() - 4))?.to_vec()));
            }
            _ => {}
        }
        off += block_len;
    }
    Ok(out)
}

/// Returns the IPv4 packet inside a link-layer frame, or `None` if it carries something else.
fn ipv4_of(linktype: u32, frame: &[u8]) -> Result<Option<&[u8]>, String> {
    let (ethertype, rest) = match linktype {
        LINKTYPE_ETHERNET => {
            let mut ethertype = u16_at(frame, 12, false)?;
            let mut start = 14;
            // 802.1Q VLAN tags.
            while ethertype == 0x8100 || ethertype == 0x88a8 {
                ethertype = u16_at(frame, start + 2, false)?;
                start += 4;
            }
            (ethertype, &frame[start..])
        }
        LINKTYPE_LINUX_SLL => (
            u16_at(frame, 14, false)?,
            slice(frame, 16, frame.len() - 16)?,
        ),
        LINKTYPE_LINUX_SLL2 => (
            u16_at(frame, 0, false)?,
            slice(frame, 20, frame.len() - 20)?,
        ),
        LINKTYPE_NULL => {
            // Address family in the capturing host's byte order; AF_INET is 2 everywhere.
            let family = u32_at(frame, 0, true)?;
            let family = if family > 0xffff {
                family.swap_bytes()
            } else {
                family
            };
            (
                if family == 2 { 0x0800 } else { 0 },
                slice(frame, 4, frame.len() - 4)?,
            )
        }
        other => return Err(format!("unsupported link type {other}")),
    };
    Ok((ethertype == 0x0800).then_some(rest))
}

fn decode_frame(cap: &mut Capture, n: usize, linktype: u32, frame: &[u8]) -> Result<(), String> {
    let err = |e: String| format!("frame {n}: {e}");
    let Some(ip) = ipv4_of(linktype, frame).map_err(err)? else {
        cap.other_frames += 1;
        return Ok(());
    };
    let version_ihl = *ip.first().ok_or_else(|| err("empty IPv4 packet".into()))?;
    let ihl = usize::from(version_ihl & 0x0f) * 4;
    if version_ihl >> 4 != 4 || ihl < 20 {
        return Err(err(format!("bad IPv4 version/IHL byte {version_ihl:#04x}")));
    }
    let total_len = usize::from(u16_at(ip, 2, false).map_err(err)?);
    let frag = u16_at(ip, 6, false).map_err(err)?;
    let proto = ip[9];
    if proto != 17 {
        cap.other_frames += 1;
        return Ok(());
    }
    if frag & 0x3fff != 0 {
        cap.ip_fragments += 1;
        return Ok(());
    }
    let src_ip = Ipv4Addr::new(ip[12], ip[13], ip[14], ip[15]);
    let dst_ip = Ipv4Addr::new(ip[16], ip[17], ip[18], ip[19]);
    let ip = ip
        .get(..total_len)
        .ok_or_else(|| err("IPv4 total length past the frame".into()))?;
    let udp = ip
        .get(ihl..)
        .ok_or_else(|| err("IPv4 header longer than packet".into()))?;
    let src_port = u16_at(udp, 0, false).map_err(err)?;
    let dst_port = u16_at(udp, 2, false).map_err(err)?;
    let udp_len = usize::from(u16_at(udp, 4, false).map_err(err)?);
    let payload = slice(udp, 8, udp_len.saturating_sub(8)).map_err(err)?;
    cap.udp.push(UdpDatagram {
        frame: n,
        src: SocketAddrV4::new(src_ip, src_port),
        dst: SocketAddrV4::new(dst_ip, dst_port),
        payload: payload.to_vec(),
    });
    Ok(())
}

/// Builds frames for the link types the reference captures do not use, to test the reader.
pub fn synthetic_frame(linktype: u32, payload: &[u8]) -> Vec<u8> {
    let mut ip = vec![
        0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 17, 0, 0, 127, 0, 0, 1, 127, 0, 0, 1,
    ];
    let total = (20 + 8 + payload.len()) as u16;
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(&7400u16.to_be_bytes());
    ip.extend_from_slice(&7410u16.to_be_bytes());
    ip.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    ip.extend_from_slice(&[0, 0]);
    ip.extend_from_slice(payload);
    let mut frame = match linktype {
        LINKTYPE_ETHERNET => {
            let mut f = vec![0; 12];
            f.extend_from_slice(&[0x08, 0x00]);
            f
        }
        LINKTYPE_LINUX_SLL => {
            let mut f = vec![0; 14];
            f.extend_from_slice(&[0x08, 0x00]);
            f
        }
        LINKTYPE_LINUX_SLL2 => {
            let mut f = vec![0x08, 0x00];
            f.extend_from_slice(&[0; 18]);
            f
        }
        LINKTYPE_NULL => 2u32.to_le_bytes().to_vec(),
        _ => unreachable!("test helper used with link type {linktype}"),
    };
    frame.extend_from_slice(&ip);
    frame
}

/// A classic little-endian pcap file holding `frames` of one link type.
pub fn synthetic_pcap(linktype: u32, frames: &[Vec<u8>]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    f.extend_from_slice(&2u16.to_le_bytes());
    f.extend_from_slice(&4u16.to_le_bytes());
    f.extend_from_slice(&[0; 8]);
    f.extend_from_slice(&65535u32.to_le_bytes());
    f.extend_from_slice(&linktype.to_le_bytes());
    for frame in frames {
        f.extend_from_slice(&[0; 8]);
        f.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        f.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        f.extend_from_slice(frame);
    }
    f
}
