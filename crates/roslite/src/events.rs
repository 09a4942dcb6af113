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
