//! [`Pair`]: one writer and its readers on a [`SimNetwork`] with a virtual clock.
//!
//! Every endpoint has its own participant prefix and UDP locator. Outgoing [`Transmit`]s are
//! packed with [`Transmit::datagrams`] (RTPS header with the sender's prefix, INFO_DST when
//! directed), sent through the network, and on arrival parsed with [`parse_message`] and
//! dispatched to `handle_*` by submessage kind and receiver state (source prefix, INFO_DST,
//! INFO_TS), exactly as a participant would.

use std::net::Ipv4Addr;
use std::time::Duration;

use crate::endpoint::{
    Reader, ReaderConfig, ReaderProxyInfo, ReceivedSample, Transmit, WriteError, Writer,
    WriterConfig, WriterProxyInfo,
};
use crate::instant::Instant;
use crate::message::MessageBuilder;
use crate::receiver::{parse_message, ReceiveStats};
use crate::types::{EntityId, Guid, GuidPrefix, Locator, SequenceNumber, Time};
use crate::wire::{HeaderRepr, Submessage};

use super::{LinkConfig, SimNetwork};

/// A GUID for tests: participant prefix `[p; 12]`, entity key `[0, 0, key]` and kind.
pub fn guid(p: u8, key: u8, kind: u8) -> Guid {
    Guid::new(GuidPrefix([p; 12]), EntityId::new([0, 0, key], kind))
}

/// A reader in a [`Pair`], with everything it delivered.
#[derive(Debug)]
pub struct SimReader {
    pub reader: Reader,
    pub locator: Locator,
    /// Samples taken from the reader with `poll_sample`, in delivery order.
    pub received: Vec<ReceivedSample>,
    pub receive_stats: ReceiveStats,
}

/// One writer and its readers. See the module documentation.
#[derive(Debug)]
pub struct Pair {
    pub now: Instant,
    pub network: SimNetwork,
    pub writer: Writer,
    pub writer_locator: Locator,
    pub writer_receive_stats: ReceiveStats,
    pub readers: Vec<SimReader>,
    pub max_datagram_size: usize,
    /// Datagrams each side handed to the network.
    pub writer_datagrams: u64,
    pub reader_datagrams: u64,
}

impl Pair {
    /// A writer at 10.0.0.1:7411 matched with one reader at 10.0.0.2:7411, perfect links, at
    /// `t = 0`. Matching is done at once on both sides, as discovery would.
    pub fn new(seed: u64, writer: WriterConfig, reader: ReaderConfig) -> Self {
        let mut pair = Pair {
            now: Instant::ZERO,
            network: SimNetwork::new(seed),
            writer: Writer::new(writer),
            writer_locator: Locator::udpv4(Ipv4Addr::new(10, 0, 0, 1), 7411),
            writer_receive_stats: ReceiveStats::default(),
            readers: Vec::new(),
            max_datagram_size: MessageBuilder::UDP_MAX_PAYLOAD,
            writer_datagrams: 0,
            reader_datagrams: 0,
        };
        pair.add_reader(reader);
        pair
    }

    /// Matches another reader now (a late joiner when the writer already wrote). Returns its
    /// index in [`Pair::readers`].
    pub fn add_reader(&mut self, config: ReaderConfig) -> usize {
        let index = self.readers.len();
        let host = u8::try_from(index.saturating_add(2)).unwrap_or(u8::MAX);
        let locator = Locator::udpv4(Ipv4Addr::new(10, 0, 0, host), 7411);
        let mut proxy = ReaderProxyInfo::new(config.guid, vec![locator]);
        proxy.reliable = config.reliable;
        proxy.transient_local = config.transient_local;
        let mut reader = Reader::new(config);
        let mut wp = WriterProxyInfo::new(self.writer.guid(), vec![self.writer_locator]);
        wp.reliable = self.writer.config().reliable;
        reader.add_writer(self.now, wp);
        self.writer.add_reader(self.now, proxy);
        self.readers.push(SimReader {
            reader,
            locator,
            received: Vec::new(),
            receive_stats: ReceiveStats::default(),
        });
        self.flush();
        index
    }

    /// Sets both directions between the writer and reader `index`.
    pub fn set_links(&mut self, index: usize, to_reader: LinkConfig, to_writer: LinkConfig) {
        if let Some(r) = self.readers.get(index) {
            let rl = r.locator;
            self.network.set_link(self.writer_locator, rl, to_reader);
            self.network.set_link(rl, self.writer_locator, to_writer);
        }
    }

    /// A wall-clock timestamp derived from the virtual clock, for INFO_TS.
    pub fn wall_clock(&self) -> Time {
        Time::from_unix(Duration::from_nanos(self.now.as_nanos()))
    }

    /// Writes a sample now (with a source timestamp) and sends what the writer wants to send.
    ///
    /// # Errors
    /// As [`Writer::write`].
    pub fn write(&mut self, payload: Vec<u8>) -> Result<SequenceNumber, WriteError> {
        let ts = Some(self.wall_clock());
        let r = self.writer.write(self.now, payload.into(), None, ts);
        self.flush();
        r
    }

    /// Retries a write until the history has room, running the simulation meanwhile; gives up
    /// after `timeout` of virtual time.
    ///
    /// # Errors
    /// The last error from [`Writer::write`].
    pub fn write_blocking(
        &mut self,
        payload: Vec<u8>,
        timeout: Duration,
    ) -> Result<SequenceNumber, WriteError> {
        let deadline = self.now.saturating_add(timeout);
        loop {
            match self.write(payload.clone()) {
                Err(WriteError::Full) if self.now < deadline => {
                    if !self.step_until(deadline) {
                        return Err(WriteError::Full);
                    }
                }
                other => return other,
            }
        }
    }

    /// Drains every endpoint's transmits into the network and every reader's samples into
    /// `received`, without advancing time.
    pub fn flush(&mut self) {
        let now = self.now;
        loop {
            let mut progress = false;
            while let Some(t) = self.writer.poll_transmit(now) {
                let from = self.writer_locator;
                let header = HeaderRepr::new(self.writer.guid().prefix);
                self.writer_datagrams = self.writer_datagrams.saturating_add(send(
                    &mut self.network,
                    &t,
                    &header,
                    from,
                    self.max_datagram_size,
                    now,
                ));
                progress = true;
            }
            for r in &mut self.readers {
                while let Some(t) = r.reader.poll_transmit(now) {
                    let header = HeaderRepr::new(r.reader.guid().prefix);
                    self.reader_datagrams = self.reader_datagrams.saturating_add(send(
                        &mut self.network,
                        &t,
                        &header,
                        r.locator,
                        self.max_datagram_size,
                        now,
                    ));
                    progress = true;
                }
                while let Some(s) = r.reader.poll_sample() {
                    r.received.push(s);
                }
            }
            if !progress {
                break;
            }
        }
    }

    /// The next instant something happens: a timer or a delivery.
    pub fn next_event(&self) -> Option<Instant> {
        let timers = self
            .readers
            .iter()
            .filter_map(|r| r.reader.poll_timeout())
            .chain(self.writer.poll_timeout());
        timers.chain(self.network.next_delivery_time()).min()
    }

    /// Advances to the next event if it is at or before `limit` and processes it. Returns
    /// false (with the clock at `limit`) if there is none.
    pub fn step_until(&mut self, limit: Instant) -> bool {
        self.flush();
        match self.next_event() {
            Some(t) if t <= limit => {
                self.now = self.now.max(t);
                self.process();
                true
            }
            _ => {
                self.now = self.now.max(limit);
                false
            }
        }
    }

    /// Runs until `deadline`, processing every event up to it.
    pub fn run_until(&mut self, deadline: Instant) {
        while self.step_until(deadline) {}
        self.flush();
    }

    /// Runs for `d` of virtual time.
    pub fn run_for(&mut self, d: Duration) {
        self.run_until(self.now.saturating_add(d));
    }

    /// Runs until `done` holds or `timeout` of virtual time passed; returns whether `done`
    /// held.
    pub fn run_while_not(
        &mut self,
        timeout: Duration,
        mut done: impl FnMut(&Pair) -> bool,
    ) -> bool {
        let deadline = self.now.saturating_add(timeout);
        loop {
            self.flush();
            if done(self) {
                return true;
            }
            if !self.step_until(deadline) {
                self.flush();
                return done(self);
            }
        }
    }

    /// Delivers due datagrams and fires due timers at `self.now`.
    fn process(&mut self) {
        let now = self.now;
        while let Some((_from, to, data)) = self.network.poll_delivery(now) {
            if to == self.writer_locator {
                deliver_to_writer(&mut self.writer, &mut self.writer_receive_stats, &data, now);
            } else if let Some(r) = self.readers.iter_mut().find(|r| r.locator == to) {
                deliver_to_reader(r, &data, now);
            }
        }
        self.writer.handle_timeout(now);
        for r in &mut self.readers {
            r.reader.handle_timeout(now);
        }
        self.flush();
    }
}

/// Packs `t` into datagrams and sends each to every destination. Returns the datagram count.
fn send(
    net: &mut SimNetwork,
    t: &Transmit,
    header: &HeaderRepr,
    from: Locator,
    max: usize,
    now: Instant,
) -> u64 {
    let mut n = 0u64;
    for dg in t.datagrams(header, max) {
        if let Some((last, rest)) = t.destinations.split_last() {
            for to in rest {
                net.send(from, *to, dg.clone(), now);
            }
            net.send(from, *last, dg, now);
        }
        n = n.saturating_add(u64::try_from(t.destinations.len()).unwrap_or(u64::MAX));
    }
    n
}

fn deliver_to_writer(writer: &mut Writer, stats: &mut ReceiveStats, data: &[u8], now: Instant) {
    let local = writer.guid().prefix;
    // Malformed input is counted in `stats`; the rest of the datagram is dropped.
    let _ = parse_message(data, stats, |rx| {
        if !rx.receiver.is_for(local) {
            return;
        }
        let src = rx.receiver.source_guid_prefix;
        match rx.submessage {
            Submessage::AckNack(a) => writer.handle_acknack(now, Guid::new(src, a.reader_id), a),
            Submessage::NackFrag(n) => {
                writer.handle_nack_frag(now, Guid::new(src, n.reader_id), n);
            }
            _ => {}
        }
    });
}

fn deliver_to_reader(r: &mut SimReader, data: &[u8], now: Instant) {
    let local = r.reader.guid().prefix;
    let reader = &mut r.reader;
    let _ = parse_message(data, &mut r.receive_stats, |rx| {
        if !rx.receiver.is_for(local) {
            return;
        }
        let src = rx.receiver.source_guid_prefix;
        let ts = rx.receiver.timestamp;
        match rx.submessage {
            Submessage::Data(d) => reader.handle_data(now, Guid::new(src, d.writer_id), d, ts),
            Submessage::DataFrag(f) => {
                reader.handle_data_frag(now, Guid::new(src, f.writer_id), f, ts);
            }
            Submessage::Heartbeat(h) => {
                reader.handle_heartbeat(now, Guid::new(src, h.writer_id), h)
            }
            Submessage::HeartbeatFrag(h) => {
                reader.handle_heartbeat_frag(now, Guid::new(src, h.writer_id), h);
            }
            Submessage::Gap(g) => reader.handle_gap(now, Guid::new(src, g.writer_id), g),
            _ => {}
        }
    });
    while let Some(s) = reader.poll_sample() {
        r.received.push(s);
    }
}
