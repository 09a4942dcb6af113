//! Endpoint status events users can observe (rclcpp's QoS event callbacks).

use std::sync::{Mutex, PoisonError};

use crate::qos::QosPolicyKind;

/// `OFFERED_INCOMPATIBLE_QOS` on a publisher, `REQUESTED_INCOMPATIBLE_QOS` on a subscription.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IncompatibleQosStatus {
    /// Incompatible peers seen so far.
    pub total_count: u32,
    /// Increase since the status was last read.
    pub total_count_change: u32,
    /// The policy that failed most recently.
    pub last_policy: Option<QosPolicyKind>,
}

type Callback = Box<dyn FnMut(IncompatibleQosStatus) + Send>;

/// Status plus an optional user callback, shared between an endpoint and the bus.
#[derive(Default)]
pub(crate) struct IncompatibleQos {
    status: Mutex<IncompatibleQosStatus>,
    callback: Mutex<Option<Callback>>,
    /// The endpoint's liveliness events (kept here: every transport already holds this).
    pub(crate) liveliness_changed: StatusEvent<LivelinessChangedStatus>,
    pub(crate) liveliness_lost: StatusEvent<LivelinessLostStatus>,
}

impl IncompatibleQos {
    pub(crate) fn record(&self, policy: QosPolicyKind) {
        let snapshot = {
            let mut status = self.status.lock().unwrap_or_else(PoisonError::into_inner);
            status.total_count += 1;
            status.total_count_change += 1;
            status.last_policy = Some(policy);
            *status
        };
        if let Some(callback) = &mut *self.callback.lock().unwrap_or_else(PoisonError::into_inner) {
            callback(snapshot);
        }
    }

    /// Reads the status and resets the change count.
    pub(crate) fn take(&self) -> IncompatibleQosStatus {
        let mut status = self.status.lock().unwrap_or_else(PoisonError::into_inner);
        let snapshot = *status;
        status.total_count_change = 0;
        snapshot
    }

    pub(crate) fn set_callback(&self, callback: Callback) {
        *self.callback.lock().unwrap_or_else(PoisonError::into_inner) = Some(callback);
    }
}

/// `LIVELINESS_CHANGED` on a subscription: how many matched publishers are alive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LivelinessChangedStatus {
    /// Matched publishers currently asserting their liveliness within their lease.
    pub alive_count: u32,
    /// Matched publishers whose lease ran out.
    pub not_alive_count: u32,
    /// Changes since the status was last read.
    pub alive_count_change: i32,
    pub not_alive_count_change: i32,
}

/// `LIVELINESS_LOST` on a publisher: times it failed to assert its liveliness (MANUAL_BY_TOPIC:
/// by publishing) within its lease.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LivelinessLostStatus {
    pub total_count: u32,
    /// Increase since the status was last read.
    pub total_count_change: u32,
}

type StatusCallback<S> = Box<dyn FnMut(S) + Send>;

/// A status with an optional user callback.
pub(crate) struct StatusEvent<S> {
    status: Mutex<S>,
    callback: Mutex<Option<StatusCallback<S>>>,
}

impl<S: Default> Default for StatusEvent<S> {
    fn default() -> Self {
        Self {
            status: Mutex::default(),
            callback: Mutex::new(None),
        }
    }
}

impl<S: Copy> StatusEvent<S> {
    pub(crate) fn update(&self, change: impl FnOnce(&mut S)) {
        let snapshot = {
            let mut status = self.status.lock().unwrap_or_else(PoisonError::into_inner);
            change(&mut status);
            *status
        };
        if let Some(callback) = &mut *self.callback.lock().unwrap_or_else(PoisonError::into_inner) {
            callback(snapshot);
        }
    }

    /// Reads the status and applies `reset` (clearing its change counts).
    pub(crate) fn take(&self, reset: impl FnOnce(&mut S)) -> S {
        let mut status = self.status.lock().unwrap_or_else(PoisonError::into_inner);
        let snapshot = *status;
        reset(&mut status);
        snapshot
    }

    pub(crate) fn set_callback(&self, callback: Box<dyn FnMut(S) + Send>) {
        *self.callback.lock().unwrap_or_else(PoisonError::into_inner) = Some(callback);
    }
}
