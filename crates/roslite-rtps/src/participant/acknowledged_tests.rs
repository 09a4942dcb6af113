//! [`Participant::acknowledging_matches`] on the virtual clock: a remote endpoint we matched
//! counts only once its participant acknowledged our SEDP announcement (RTPS 2.5 §8.5.4.2),
//! so a count never runs ahead of the other side's own match, and a peer that never
//! acknowledges is never counted.

use super::*;

const BACK: &str = "rt/back";

fn back() -> EndpointOptions {
    EndpointOptions::new(BACK, STRING).with_qos(EndpointQos::ros_default())
}

/// Node 0 makes a writer on `chatter` and a reader on `back` after nodes 1 and 2 made their
/// counterparts and everyone discovered everyone; node 2 applies discovery but never
/// acknowledges an SEDP announcement. Node 0 matches both peers at once (it knows their
/// endpoints), yet counts node 1 only once node 1 matched node 0's endpoint itself, and never
/// counts node 2.
fn counts_follow_the_peers_own_matches(mut s: Swarm) {
    s.nodes[2].mutes_sedp_acks = true;
    let t0 = s.now;
    let mut theirs = Vec::new();
    for i in 1..=2 {
        let reader = s
            .p(i)
            .create_reader(t0, chatter(EndpointQos::ros_default()))
            .unwrap();
        let writer = s.p(i).create_writer(t0, back()).unwrap();
        theirs.push((reader, writer));
    }
    s.run_for(Duration::from_secs(2));

    let now = s.now;
    let w = s
        .p(0)
        .create_writer(now, chatter(EndpointQos::ros_default()))
        .unwrap();
    let r = s.p(0).create_reader(now, back()).unwrap();
    let (wg, rg) = (w.guid(s.p(0).guid_prefix()), r.guid(s.p(0).guid_prefix()));
    let ours = [EndpointRef::Writer(w), EndpointRef::Reader(r)];
    assert_eq!(
        s.p(0).writer_matches(w).count(),
        2,
        "matched from what we knew"
    );
    assert_eq!(s.p(0).reader_matches(r).count(), 2);
    for local in ours {
        assert_eq!(
            s.p(0).acknowledging_matches(local),
            0,
            "{local:?}: nobody knows it yet"
        );
    }

    // Whether node `i` matched our writer and our reader on its side.
    let peer_matched = |s: &mut Swarm, i: usize| {
        let (reader, writer) = theirs[i - 1];
        let knows_w = s.p(i).reader_matches(reader).any(|g| g == wg);
        let knows_r = s.p(i).writer_matches(writer).any(|g| g == rg);
        (knows_w, knows_r)
    };
    let mut counted_at = None;
    let until = s.now + Duration::from_secs(3);
    while s.now < until {
        s.run_for(Duration::from_micros(100));
        let counts = ours.map(|local| s.p(0).acknowledging_matches(local));
        // Node 2 never acknowledges: any count is node 1's, which must have matched.
        let (knows_w, knows_r) = peer_matched(&mut s, 1);
        assert!(
            counts[0] <= 1 && counts[1] <= 1,
            "at {:?}: {counts:?}",
            s.now
        );
        assert!(
            counts[0] == 0 || knows_w,
            "writer counted before node 1 matched it"
        );
        assert!(
            counts[1] == 0 || knows_r,
            "reader counted before node 1 matched it"
        );
        if counted_at.is_none() && counts == [1, 1] {
            counted_at = Some(s.now);
        }
    }
    let counted_at = counted_at.expect("node 1 acknowledged both announcements");
    assert!(counted_at > now, "not at once: only after a round trip");
    for local in ours {
        assert_eq!(
            s.p(0).acknowledging_matches(local),
            1,
            "{local:?}: node 1 only"
        );
    }
    // Node 2 did discover and match both, it only never said so.
    assert_eq!(peer_matched(&mut s, 2), (true, true));
    assert_eq!(s.p(0).writer_matches(w).count(), 2);
    assert_eq!(s.p(0).reader_matches(r).count(), 2);
}

#[test]
fn a_match_counts_once_the_peer_acknowledged_our_announcement() {
    counts_follow_the_peers_own_matches(Swarm::new(3, 41));
}

#[test]
fn a_match_counts_once_the_peer_acknowledged_our_announcement_over_a_lossy_network() {
    counts_follow_the_peers_own_matches(Swarm::new(3, 43).rough(0.2));
}
