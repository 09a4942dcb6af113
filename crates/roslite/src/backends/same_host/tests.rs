//! How much the same-host planning looks at as discovery goes on: two bare RTPS participants
//! on a simulated loopback (no sockets; the clock is a counter), the remote one advertising
//! this host, and this context's plan told of each change as the network tells it.

use std::sync::Arc;
use std::time::Duration;

use roslite_rtps::participant::{EndpointOptions, Event, Participant, ParticipantConfig};
use roslite_rtps::types::{GuidPrefix, Locator};
use roslite_rtps::Instant;
use roslite_shm::HostId;

use super::SameHost;
use crate::backends::rtps::EmptyRuntime;
use crate::vocabulary::config::LocalTransports;
use crate::vocabulary::events::MatchReports;
use crate::vocabulary::log::Logger;

/// The two participants, wired by the locators they announce.
struct Pair {
    participants: [Participant; 2],
    locators: [Vec<Locator>; 2],
    now: Instant,
}

impl Pair {
    fn new(peer_user_data: Vec<u8>) -> Self {
        let config = |i: u8| {
            let mut c = ParticipantConfig::localhost(GuidPrefix([i + 1; 12]), 7, u32::from(i), 2);
            if i == 1 {
                c.user_data = peer_user_data.clone();
            }
            c
        };
        let participants = [0, 1].map(|i| Participant::new(config(i), Instant::ZERO).unwrap());
        let locators = [0, 1].map(|i| {
            let c = participants[i].config();
            c.metatraffic_unicast
                .iter()
                .chain(&c.default_unicast)
                .copied()
                .collect()
        });
        Self {
            participants,
            locators,
            now: Instant::ZERO,
        }
    }

    /// Runs 100 ms of protocol: every datagram delivered at once, timers every millisecond.
    fn settle(&mut self) {
        for _ in 0..100 {
            loop {
                let mut moved = false;
                for from in 0..2 {
                    while let Some(d) = self.participants[from].poll_transmit(self.now) {
                        moved = true;
                        let source = self.locators[from][0];
                        for to in 0..2 {
                            if to != from
                                && d.destinations.iter().any(|l| self.locators[to].contains(l))
                            {
                                let bytes = d.bytes.to_vec();
                                self.participants[to].handle_datagram(
                                    self.now,
                                    Some(source),
                                    &bytes,
                                );
                            }
                        }
                    }
                }
                if !moved {
                    break;
                }
            }
            self.now += Duration::from_millis(1);
            for p in &mut self.participants {
                if p.poll_timeout().is_some_and(|t| t <= self.now) {
                    p.handle_timeout(self.now);
                }
            }
        }
    }
}

/// Remote endpoints the plan looked at while a peer on this host announced `writers`
/// writers one after another, each change reported to it as the network reports them.
fn planned_while_peer_announces(writers: usize) -> u64 {
    let logger = Logger::new("roslite.test");
    let mut plan = SameHost::start(LocalTransports::default(), logger, Arc::new(|_| {}))
        .expect("a same-host endpoint");
    let host = HostId::current().unwrap();
    let user_data = format!(
        "enclave=/;roslite_host={host};roslite_local=@roslite-plan-test;roslite_via=shm,uds;"
    );
    let mut pair = Pair::new(user_data.into_bytes());
    let runtime = EmptyRuntime::default();
    let mut reports = MatchReports::new();
    let mut follow = |pair: &mut Pair, plan: &mut SameHost| {
        while let Some(event) = pair.participants[0].poll_event() {
            match event {
                Event::ParticipantDiscovered(guid) => {
                    let user_data = pair.participants[0]
                        .remote_participant(guid.prefix)
                        .unwrap()
                        .user_data()
                        .to_vec();
                    assert!(!plan
                        .participant_discovered(guid.prefix, &user_data)
                        .is_empty());
                }
                Event::RemoteEndpointChanged => {
                    let changed = pair.participants[0].take_remote_endpoint_changes();
                    let view = runtime.view(&pair.participants[0]);
                    plan.remote_endpoints_changed(&view, changed.as_deref(), &mut reports);
                }
                _ => {}
            }
        }
    };
    pair.settle();
    follow(&mut pair, &mut plan);
    for k in 0..writers {
        let now = pair.now;
        pair.participants[1]
            .create_writer(
                now,
                EndpointOptions::new(&format!("rt/topic_{k}"), "std_msgs::msg::dds_::String_"),
            )
            .unwrap();
        pair.settle();
        follow(&mut pair, &mut plan);
    }
    assert_eq!(pair.participants[0].remote_endpoints().count(), writers);
    plan.pairs_planned()
}

#[test]
fn each_remote_endpoint_is_planned_once_not_every_endpoint_at_every_change() {
    // Each announcement re-plans the endpoint announced: linear in the graph. Re-planning every
    // known endpoint at every change, as before, looked at n (n + 1) / 2 of them.
    assert_eq!(planned_while_peer_announces(4), 4);
    assert_eq!(planned_while_peer_announces(48), 48);
}
