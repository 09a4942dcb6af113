//! The goal state machine and the choice of goals a cancel request names, as rcl_action has
//! them (`goal_state_machine.c`, `rcl_action_process_cancel_request`): pure functions, no
//! endpoint, no clock.
//!
//! ```text
//!              execute                 succeed / abort
//!   ACCEPTED ----------> EXECUTING ---------------------> SUCCEEDED / ABORTED
//!       |                   |                                  ^
//!       | cancel_goal       | cancel_goal                      | succeed / abort
//!       +-----------------> CANCELING -------------------------+
//!                               |  canceled
//!                               +----------> CANCELED
//! ```

use std::fmt;

use roslite_msgs::action_msgs::msg::GoalStatus;
use roslite_msgs::builtin_interfaces::msg::Time as TimeMsg;
use roslite_msgs::unique_identifier_msgs::msg::UUID;

/// A goal's id: 16 random bytes (a version 4 UUID), as rclcpp and rclpy make them.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct GoalId(pub [u8; 16]);

impl GoalId {
    /// A fresh random id (UUID version 4, RFC 4122 variant) from the system's random source.
    pub fn random() -> Self {
        let mut bytes = [0u8; 16];
        // getrandom(2) does not fail for 16 bytes once the pool is initialised; were it to,
        // a zero-filled tail would still be set apart by the counter below.
        let _ = rustix::rand::getrandom(&mut bytes, rustix::rand::GetRandomFlags::empty());
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        for (byte, counter) in bytes[8..].iter_mut().zip(n.to_le_bytes()) {
            *byte ^= counter;
        }
        bytes[6] = (bytes[6] & 0x0f) | 0x40;
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        Self(bytes)
    }

    /// The all-zero id, which a cancel request uses to mean "any goal".
    pub fn is_zero(&self) -> bool {
        self.0 == [0; 16]
    }

    pub fn to_msg(self) -> UUID {
        UUID { uuid: self.0 }
    }

    pub fn from_msg(msg: &UUID) -> Self {
        Self(msg.uuid)
    }
}

impl fmt::Display for GoalId {
    /// `8-4-4-4-12` hex, as `ros2 action send_goal` prints goal ids (without dashes there).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, byte) in self.0.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for GoalId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GoalId({self})")
    }
}

/// `action_msgs/msg/GoalStatus` codes, in the message's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i8)]
pub enum GoalStatusCode {
    Unknown = GoalStatus::STATUS_UNKNOWN,
    Accepted = GoalStatus::STATUS_ACCEPTED,
    Executing = GoalStatus::STATUS_EXECUTING,
    Canceling = GoalStatus::STATUS_CANCELING,
    Succeeded = GoalStatus::STATUS_SUCCEEDED,
    Canceled = GoalStatus::STATUS_CANCELED,
    Aborted = GoalStatus::STATUS_ABORTED,
}

impl GoalStatusCode {
    /// The code of a status message; a code this version does not know reads as `Unknown`.
    pub fn from_code(code: i8) -> Self {
        match code {
            GoalStatus::STATUS_ACCEPTED => Self::Accepted,
            GoalStatus::STATUS_EXECUTING => Self::Executing,
            GoalStatus::STATUS_CANCELING => Self::Canceling,
            GoalStatus::STATUS_SUCCEEDED => Self::Succeeded,
            GoalStatus::STATUS_CANCELED => Self::Canceled,
            GoalStatus::STATUS_ABORTED => Self::Aborted,
            _ => Self::Unknown,
        }
    }

    pub fn code(self) -> i8 {
        self as i8
    }

    /// Succeeded, canceled or aborted: the goal has its result.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Succeeded | Self::Canceled | Self::Aborted)
    }

    /// Accepted or executing: a cancel request can still reach it.
    pub fn is_cancelable(self) -> bool {
        matches!(self, Self::Accepted | Self::Executing)
    }

    /// Accepted, executing or canceling.
    pub fn is_active(self) -> bool {
        matches!(self, Self::Accepted | Self::Executing | Self::Canceling)
    }
}

impl fmt::Display for GoalStatusCode {
    /// As `ros2 action send_goal` prints it (`SUCCEEDED`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Unknown => "UNKNOWN",
            Self::Accepted => "ACCEPTED",
            Self::Executing => "EXECUTING",
            Self::Canceling => "CANCELING",
            Self::Succeeded => "SUCCEEDED",
            Self::Canceled => "CANCELED",
            Self::Aborted => "ABORTED",
        })
    }
}

/// What moves a goal from one state to the next (rcl_action's `rcl_action_goal_event_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoalEvent {
    Abort,
    CancelGoal,
    Canceled,
    Execute,
    Succeed,
}

impl fmt::Display for GoalEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Abort => "abort",
            Self::CancelGoal => "cancel",
            Self::Canceled => "canceled",
            Self::Execute => "execute",
            Self::Succeed => "succeed",
        })
    }
}

/// The state `event` moves a goal in state `from` to, or `None` when it may not happen there
/// (rcl_action's transition table).
pub fn transition(from: GoalStatusCode, event: GoalEvent) -> Option<GoalStatusCode> {
    use GoalEvent as E;
    use GoalStatusCode as S;
    match (from, event) {
        (S::Accepted, E::Execute) => Some(S::Executing),
        (S::Accepted | S::Executing, E::CancelGoal) => Some(S::Canceling),
        (S::Executing | S::Canceling, E::Succeed) => Some(S::Succeeded),
        (S::Executing | S::Canceling, E::Abort) => Some(S::Aborted),
        (S::Canceling, E::Canceled) => Some(S::Canceled),
        _ => None,
    }
}

/// `builtin_interfaces/msg/Time` as nanoseconds, for comparing stamps.
pub fn stamp_nanos(stamp: &TimeMsg) -> i64 {
    i64::from(stamp.sec) * 1_000_000_000 + i64::from(stamp.nanosec)
}

/// The goals a cancel request names, or why it names none it could cancel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CancelSelection {
    /// Goals to offer to the server's cancel callback (possibly none).
    Goals(Vec<GoalId>),
    /// The request named one goal (and no stamp) that the server does not know.
    UnknownGoal,
    /// The request named one goal (and no stamp) that already ended.
    GoalTerminated,
}

/// Which of `goals` (id, acceptance stamp, state) the cancel request for (`goal_id`, `stamp`)
/// names, per `action_msgs/srv/CancelGoal`: a zero id and zero stamp cancel every goal; a zero
/// id and a stamp cancel the goals accepted at or before it; an id and a zero stamp cancel
/// that goal; an id and a stamp cancel that goal and those accepted at or before the stamp.
/// Only accepted and executing goals can be canceled.
pub fn select_for_cancel(
    goal_id: GoalId,
    stamp: &TimeMsg,
    goals: impl IntoIterator<Item = (GoalId, i64, GoalStatusCode)>,
) -> CancelSelection {
    let by_stamp = stamp_nanos(stamp) != 0;
    let before = stamp_nanos(stamp);
    let mut named = None;
    let mut chosen = Vec::new();
    for (id, accepted_at, state) in goals {
        let is_named = !goal_id.is_zero() && id == goal_id;
        if is_named {
            named = Some(state);
        }
        let wanted = if goal_id.is_zero() && !by_stamp {
            true
        } else {
            is_named || (by_stamp && accepted_at <= before)
        };
        if wanted && state.is_cancelable() {
            chosen.push(id);
        }
    }
    if !goal_id.is_zero() && !by_stamp {
        match named {
            None => return CancelSelection::UnknownGoal,
            Some(state) if state.is_terminal() => return CancelSelection::GoalTerminated,
            Some(_) => {}
        }
    }
    CancelSelection::Goals(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    use GoalEvent as E;
    use GoalStatusCode as S;

    fn id(n: u8) -> GoalId {
        GoalId([n; 16])
    }

    fn at(sec: i32) -> TimeMsg {
        TimeMsg { sec, nanosec: 0 }
    }

    #[test]
    fn transitions_follow_rcl_action() {
        assert_eq!(transition(S::Accepted, E::Execute), Some(S::Executing));
        assert_eq!(transition(S::Accepted, E::CancelGoal), Some(S::Canceling));
        assert_eq!(transition(S::Executing, E::Succeed), Some(S::Succeeded));
        assert_eq!(transition(S::Executing, E::Abort), Some(S::Aborted));
        assert_eq!(transition(S::Canceling, E::Canceled), Some(S::Canceled));
        assert_eq!(transition(S::Canceling, E::Succeed), Some(S::Succeeded));
        // A goal must be canceling to end as canceled, and ends once.
        assert_eq!(transition(S::Executing, E::Canceled), None);
        assert_eq!(transition(S::Accepted, E::Succeed), None);
        for end in [S::Succeeded, S::Canceled, S::Aborted] {
            for event in [E::Abort, E::CancelGoal, E::Canceled, E::Execute, E::Succeed] {
                assert_eq!(transition(end, event), None, "{end} then {event}");
            }
        }
    }

    #[test]
    fn status_codes_round_trip_and_unknown_codes_read_as_unknown() {
        for s in [
            S::Unknown,
            S::Accepted,
            S::Executing,
            S::Canceling,
            S::Succeeded,
            S::Canceled,
            S::Aborted,
        ] {
            assert_eq!(GoalStatusCode::from_code(s.code()), s);
        }
        assert_eq!(GoalStatusCode::from_code(42), S::Unknown);
    }

    #[test]
    fn random_ids_are_version_4_and_distinct() {
        let a = GoalId::random();
        let b = GoalId::random();
        assert_ne!(a, b);
        assert_eq!(a.0[6] >> 4, 4);
        assert_eq!(a.0[8] >> 6, 0b10);
        assert_eq!(a.to_string().len(), 36);
    }

    #[test]
    fn cancel_requests_select_as_cancel_goal_srv_says() {
        let goals = [
            (id(1), 10_000_000_000, S::Executing),
            (id(2), 20_000_000_000, S::Accepted),
            (id(3), 30_000_000_000, S::Succeeded),
            (id(4), 40_000_000_000, S::Canceling),
        ];
        let zero = TimeMsg::default();
        assert_eq!(
            select_for_cancel(GoalId::default(), &zero, goals),
            CancelSelection::Goals(vec![id(1), id(2)])
        );
        assert_eq!(
            select_for_cancel(GoalId::default(), &at(15), goals),
            CancelSelection::Goals(vec![id(1)])
        );
        assert_eq!(
            select_for_cancel(id(2), &zero, goals),
            CancelSelection::Goals(vec![id(2)])
        );
        assert_eq!(
            select_for_cancel(id(2), &at(10), goals),
            CancelSelection::Goals(vec![id(1), id(2)])
        );
        assert_eq!(
            select_for_cancel(id(9), &zero, goals),
            CancelSelection::UnknownGoal
        );
        assert_eq!(
            select_for_cancel(id(3), &zero, goals),
            CancelSelection::GoalTerminated
        );
        // Already canceling: nothing left to cancel, which the server answers as rejected.
        assert_eq!(
            select_for_cancel(id(4), &zero, goals),
            CancelSelection::Goals(vec![])
        );
    }
}
