//! A participant's local writers or readers, with the bookkeeping that lets a flush, a timer
//! and the sample queue look at the endpoints an input touched instead of all of them.
//!
//! The endpoint contract (`endpoint` module docs, [`crate::endpoint::Drained`]) says an
//! endpoint's output changes only through a `&mut` method or through its own timer. This table
//! hands out `&mut` access only through [`Table::get_mut`] (and the rare
//! [`Table::values_mut_all`]), which records the endpoint as *touched*. Hence:
//! - a flush asks only the touched endpoints for datagrams ([`Table::flush`]); every other
//!   one was drained before and has not changed;
//! - after a flush each endpoint's next timer is indexed ([`Table::index_timer`]), so the next
//!   deadline is the index's first entry (plus the timers of endpoints touched since, which
//!   [`Table::touched`] lists) and a timeout visits the endpoints due ([`Table::due`]) only;
//! - readers touched since the sample queue last looked are [`Table::take_unchecked`], so the
//!   participant keeps the set of readers with samples up to date at that cost.
//!
//! Invariant: every endpoint is either touched (and not in the timer index) or has its
//! current timer, if any, in the index.

use std::collections::{BTreeMap, BTreeSet};

use crate::instant::Instant;
use crate::types::EntityId;

#[derive(Debug)]
pub(super) struct Table<T> {
    map: BTreeMap<EntityId, T>,
    /// Touched since the last flush.
    touched: BTreeSet<EntityId>,
    /// Touched since the sample queue last looked.
    unchecked: BTreeSet<EntityId>,
    /// The next timer of every endpoint not touched since its last flush, in time order.
    timers: BTreeSet<(Instant, EntityId)>,
    timer_of: BTreeMap<EntityId, Instant>,
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Self {
            map: BTreeMap::new(),
            touched: BTreeSet::new(),
            unchecked: BTreeSet::new(),
            timers: BTreeSet::new(),
            timer_of: BTreeMap::new(),
        }
    }
}

impl<T> Table<T> {
    pub(super) fn get(&self, id: &EntityId) -> Option<&T> {
        self.map.get(id)
    }

    /// Mutable access, which marks the endpoint touched (and takes its timer out of the
    /// index until its next flush).
    pub(super) fn get_mut(&mut self, id: &EntityId) -> Option<&mut T> {
        if !self.map.contains_key(id) {
            return None;
        }
        self.touched.insert(*id);
        self.unchecked.insert(*id);
        self.unindex_timer(id);
        self.map.get_mut(id)
    }

    pub(super) fn insert(&mut self, id: EntityId, endpoint: T) {
        self.map.insert(id, endpoint);
        self.touched.insert(id);
        self.unchecked.insert(id);
    }

    pub(super) fn remove(&mut self, id: &EntityId) -> Option<T> {
        let endpoint = self.map.remove(id)?;
        self.touched.remove(id);
        self.unchecked.remove(id);
        self.unindex_timer(id);
        Some(endpoint)
    }

    pub(super) fn contains_key(&self, id: &EntityId) -> bool {
        self.map.contains_key(id)
    }

    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    pub(super) fn values(&self) -> impl Iterator<Item = &T> {
        self.map.values()
    }

    /// Every endpoint, mutably, all marked touched: for the rare inputs that concern all of
    /// them (a reassembly budget evicting a peer, a participant-wide liveliness assertion).
    pub(super) fn values_mut_all(&mut self) -> impl Iterator<Item = &mut T> {
        self.touched.extend(self.map.keys().copied());
        self.unchecked.extend(self.map.keys().copied());
        self.timers.clear();
        self.timer_of.clear();
        self.map.values_mut()
    }

    /// The flush: runs `drain` on every endpoint touched since the last one (it polls the
    /// endpoint until it has nothing more to send and returns its next timer), indexes that
    /// timer, and forgets the endpoint's touch. Returns how many endpoints it visited.
    pub(super) fn flush(&mut self, mut drain: impl FnMut(&mut T) -> Option<Instant>) -> u64 {
        let touched = std::mem::take(&mut self.touched);
        let visited = touched.len() as u64;
        for id in touched {
            if let Some(endpoint) = self.map.get_mut(&id) {
                let next = drain(endpoint);
                self.index_timer(id, next);
            }
        }
        visited
    }

    /// The endpoints touched since the last flush (their timers are not in the index).
    pub(super) fn touched(&self) -> impl Iterator<Item = (&EntityId, &T)> {
        self.touched
            .iter()
            .filter_map(|id| Some((id, self.map.get(id)?)))
    }

    /// The readers touched since the sample queue last looked, forgetting them.
    pub(super) fn take_unchecked(&mut self) -> BTreeSet<EntityId> {
        std::mem::take(&mut self.unchecked)
    }

    /// Records endpoint `id`'s next timer, as its flush left it.
    fn index_timer(&mut self, id: EntityId, next: Option<Instant>) {
        self.unindex_timer(&id);
        if let (Some(at), true) = (next, self.map.contains_key(&id)) {
            self.timers.insert((at, id));
            self.timer_of.insert(id, at);
        }
    }

    fn unindex_timer(&mut self, id: &EntityId) {
        if let Some(at) = self.timer_of.remove(id) {
            self.timers.remove(&(at, *id));
        }
    }

    /// The earliest timer of the endpoints not touched since their flush.
    pub(super) fn next_indexed_timer(&self) -> Option<Instant> {
        self.timers.first().map(|(at, _)| *at)
    }

    /// The endpoints whose indexed timer is due at `now`.
    pub(super) fn due(&self, now: Instant) -> Vec<EntityId> {
        self.timers
            .iter()
            .take_while(|(at, _)| *at <= now)
            .map(|(_, id)| *id)
            .collect()
    }
}
