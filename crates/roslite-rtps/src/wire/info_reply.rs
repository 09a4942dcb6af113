//! INFO_REPLY: where to send replies to the following submessages (RTPS 2.5 §8.3.8.8,
//! §9.4.5.9).

use roslite_cdr::Endianness;

use super::{emit_header, SubmessageId};
use crate::bytes::{endianness_of, put_u32, Reader};
use crate::error::ParseError;
use crate::types::Locator;

/// M: a multicast locator list follows the unicast one.
pub const FLAG_M: u8 = 0x02;

/// Most locators one list may hold; more is treated as malformed (docs/robustness.md §1, caps
/// on locator counts). Real senders use one per interface.
pub const MAX_LOCATORS: usize = 32;

/// An INFO_REPLY submessage.
///
/// ```text
/// 0...............8..............16..............24..............32
/// +---------------+---------------+---------------+---------------+
/// |INFO_REPLY 0x0f|X|X|X|X|X|X|M|E|      octetsToNextHeader       |
/// +---------------+---------------+---------------+---------------+
/// |                 unsigned long numLocators                     |
/// +---------------+---------------+---------------+---------------+
/// ~          Locator unicastLocatorList[numLocators] (24 each)    ~
/// +---------------+---------------+---------------+---------------+
/// ~          LocatorList multicastLocatorList  [only if M == 1]   ~
/// +---------------+---------------+---------------+---------------+
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Repr {
    pub unicast_locators: Vec<Locator>,
    /// `None` when the M flag is clear.
    pub multicast_locators: Option<Vec<Locator>>,
}

impl Repr {
    /// # Errors
    /// [`ParseError::Truncated`] if a list is cut; [`ParseError::Malformed`] if a list claims
    /// more than [`MAX_LOCATORS`] entries.
    pub fn parse(body: &[u8], flags: u8) -> Result<Self, ParseError> {
        let mut r = Reader::new(body, endianness_of(flags));
        let unicast_locators = read_list(&mut r)?;
        let multicast_locators = if flags & FLAG_M != 0 {
            Some(read_list(&mut r)?)
        } else {
            None
        };
        Ok(Repr {
            unicast_locators,
            multicast_locators,
        })
    }

    pub fn flags(&self) -> u8 {
        if self.multicast_locators.is_some() {
            FLAG_M
        } else {
            0
        }
    }

    fn body_len(&self) -> usize {
        let list = |n: usize| n.saturating_mul(Locator::WIRE_LEN).saturating_add(4);
        list(self.unicast_locators.len()).saturating_add(
            self.multicast_locators
                .as_ref()
                .map_or(0, |m| list(m.len())),
        )
    }

    pub fn buffer_len(&self) -> usize {
        self.body_len().saturating_add(4)
    }

    pub fn emit(&self, buf: &mut Vec<u8>, e: Endianness) {
        emit_header(
            buf,
            SubmessageId::INFO_REPLY,
            self.flags(),
            self.body_len(),
            e,
        );
        write_list(buf, e, &self.unicast_locators);
        if let Some(m) = &self.multicast_locators {
            write_list(buf, e, m);
        }
    }
}

fn read_list(r: &mut Reader<'_>) -> Result<Vec<Locator>, ParseError> {
    let n = usize::try_from(r.u32()?).map_err(|_| ParseError::Malformed)?;
    if n > MAX_LOCATORS {
        return Err(ParseError::Malformed);
    }
    // Checked before allocating: n locators must be present.
    if n.saturating_mul(Locator::WIRE_LEN) > r.remaining() {
        return Err(ParseError::Truncated);
    }
    (0..n).map(|_| Locator::read(r)).collect()
}

fn write_list(buf: &mut Vec<u8>, e: Endianness, list: &[Locator]) {
    put_u32(buf, e, u32::try_from(list.len()).unwrap_or(u32::MAX));
    for l in list {
        l.write(buf, e);
    }
}
